//! PLACEHOLDER until the glob tool lands.
use crate::error::ToolError;
use crate::protocol::{Args, Outcome};

pub fn run(_args: &Args) -> Outcome {
    Err(ToolError::InvalidArg("glob is not built yet".to_owned()))
}
