//! job_write (full profile): types input to a job started with
//! `run_in_background` or `tty` (docs/TOOLS.md, "Talking to a job").

use super::job_output::state_fields;
use crate::context::Context;
use crate::error::ToolError;
use crate::jobs::control;
use crate::json::Field;
use crate::protocol::{Answer, Args, Outcome};

/// A call's parameters (job_write.full.schema.json), read and checked once.
#[derive(Debug)]
pub struct Request<'a> {
    pub job_id: &'a str,
    pub input: &'a str,
    /// Close the command's stdin after the input (Ctrl-D on a terminal).
    pub close_stdin: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Self, ToolError> {
        Ok(Request {
            job_id: args.required_str("job_id")?,
            input: args.required_str("input")?,
            close_stdin: args.optional_bool("close_stdin")?.unwrap_or(false),
        })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let bytes = request.input.as_bytes();
    let (written, ended) = control::write(
        &context.jobs,
        context.roots()?,
        request.job_id,
        bytes,
        request.close_stdin,
    )?;
    let mut fields: Answer = vec![("written", Field::Int(written.taken as i64))];
    fields.extend(state_fields(ended));
    if written.closed {
        fields.push(("stdin_closed", Field::Bool(true)));
    }
    if written.taken < bytes.len() {
        let note = format!(
            "the command took {} of {} bytes and is not reading: job_output shows what it waits \
             for; job_write the rest later",
            written.taken,
            bytes.len()
        );
        fields.push(("note", Field::Text(note.into_bytes())));
    }
    Ok(fields)
}
