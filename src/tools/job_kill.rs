//! job_kill (full profile): stops a job's whole process group, as a
//! host's timeout would (docs/TOOLS.md, "Jobs").

use crate::context::Context;
use crate::jobs::control;
use crate::protocol::{Args, Outcome};

pub fn run(args: &Args, context: &Context) -> Outcome {
    let id = args.required_str("job_id")?;
    control::kill(&context.jobs, context.roots()?, id)
}
