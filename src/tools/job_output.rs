//! job_output (full profile): what a job printed since the last read,
//! whether it runs, its exit code once ended (docs/TOOLS.md, "Jobs").

use std::time::Duration;

use crate::context::Context;
use crate::error::ToolError;
use crate::jobs::control;
use crate::protocol::{Args, Outcome};

pub fn run(args: &Args, context: &Context) -> Outcome {
    let id = args.required_str("job_id")?;
    let wait = match args.optional_int("wait")? {
        None => Duration::ZERO,
        Some(n) if n >= 0 => Duration::from_secs(n.unsigned_abs()),
        Some(_) => {
            return Err(ToolError::InvalidArg(
                "parameter wait must be a number of seconds, 0 or more".to_owned(),
            ))
        }
    };
    control::output(&context.jobs, context.roots()?, id, wait, context.max_output)
}
