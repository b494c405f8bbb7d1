//! job_kill (full profile): stops a job's whole process group, as a
//! host's timeout would (docs/TOOLS.md, "Jobs").

use super::job_output::state_fields;
use crate::context::Context;
use crate::error::ToolError;
use crate::jobs::control;
use crate::json::Field;
use crate::protocol::{Answer, Args, Outcome};

/// A call's parameters (job_kill.full.schema.json), read and checked once.
#[derive(Debug)]
pub struct Request<'a> {
    pub job_id: &'a str,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Self, ToolError> {
        Ok(Request { job_id: args.required_str("job_id")? })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let ended = control::kill(&context.jobs, context.roots()?, request.job_id)?;
    let mut fields: Answer = vec![("job_id", Field::Text(request.job_id.as_bytes().to_vec()))];
    fields.extend(state_fields(ended));
    Ok(fields)
}
