//! job_list (full profile): the jobs of the caller's agent or session
//! (docs/TOOLS.md, "Jobs").

use crate::context::Context;
use crate::jobs::control;
use crate::protocol::{Args, Outcome};

pub fn run(_args: &Args, context: &Context) -> Outcome {
    control::list(&context.jobs, context.roots()?, context.max_output)
}
