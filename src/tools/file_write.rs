//! PLACEHOLDER until the file_write tool lands.
use crate::error::ToolError;
use crate::protocol::{Args, Outcome};

pub fn run(_args: &Args) -> Outcome {
    Err(ToolError::InvalidArg("file_write is not built yet".to_owned()))
}
