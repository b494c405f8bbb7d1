//! job_output (full profile): what a job printed since the last read,
//! whether it runs, its exit code once ended (docs/TOOLS.md, "Jobs").

use std::time::Duration;

use crate::context::Context;
use crate::error::ToolError;
use crate::jobs::control;
use crate::jobs::store::Ended;
use crate::json::Field;
use crate::protocol::{Answer, Args, Outcome};

/// What the answer holds beside the output, past `limit::ANSWER_RESERVE`
/// (`"running":false,"timed_out":true` and a job id).
const FIELDS_RESERVE: usize = 96;

/// A call's parameters (job_output.full.schema.json), read and checked once.
#[derive(Debug)]
pub struct Request<'a> {
    pub job_id: &'a str,
    /// How long to wait for new output or the end; zero when not given.
    pub wait: Duration,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Self, ToolError> {
        let job_id = args.required_str("job_id")?;
        let wait = match args.optional_int("wait")? {
            None => Duration::ZERO,
            Some(n) if n >= 0 => Duration::from_secs(n.unsigned_abs()),
            Some(_) => {
                return Err(ToolError::InvalidArg(
                    "parameter wait must be a number of seconds, 0 or more".to_owned(),
                ))
            }
        };
        Ok(Request { job_id, wait })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let keep = context.answer_limit(FIELDS_RESERVE);
    let read =
        control::output(&context.jobs, context.roots()?, request.job_id, request.wait, keep)?;
    let mut fields: Answer = vec![("output", Field::Parts(read.parts))];
    fields.extend(state_fields(read.ended));
    Ok(fields)
}

/// `running`, and once ended `exit_code` (and `timed_out` when so): how
/// job_output, job_kill and a bash call that started a job say a job's state.
pub fn state_fields(ended: Option<Ended>) -> Vec<(&'static str, Field)> {
    match ended {
        None => vec![("running", Field::Bool(true))],
        Some(e) => {
            let mut fields =
                vec![("running", Field::Bool(false)), ("exit_code", Field::Int(e.exit_code))];
            if e.timed_out {
                fields.push(("timed_out", Field::Bool(true)));
            }
            fields
        }
    }
}
