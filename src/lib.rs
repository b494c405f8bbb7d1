//! ikigai-tools: the six tools a language model uses to act on a machine
//! (bash, file_read, file_write, file_edit, glob, grep) as one multicall
//! binary. See README.md for the protocol.

pub mod cli;
pub mod confine;
pub mod error;
pub mod fs;
pub mod host;
pub mod json;
pub mod limit;
pub mod mcp;
pub mod memory;
pub mod process;
pub mod protocol;
pub mod tools;
