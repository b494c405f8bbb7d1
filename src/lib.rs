//! ikigai-tools: the tools a language model uses to act on a machine
//! (bash, file_read, file_write, file_edit, glob, grep; the job tools in the
//! full profile) as one multicall binary. See docs/SPEC.md for what it implements and docs/ARCHITECTURE.md for the code.
//!
//! What the crate offers outside: the binary's entry point (`cli::main`),
//! the table of the tools (`tools::TOOLS`), the environment variables
//! (`env_vars::ENVIRONMENT`), the argument parser (`Args`,
//! for the fuzz target) and the host side as a library (`host`). The rest
//! is the binary's own.

pub mod cli;
mod confine;
mod context;
pub mod env_vars;
mod error;
mod fs;
pub mod host;
mod jobs;
mod json;
mod limit;
mod mcp;
mod memory;
mod print;
mod private_dir;
mod process;
pub mod profile;
mod protocol;
mod random_name;
pub mod tools;
pub mod web;

pub use protocol::Args;

/// The suite's own name, as installed in `PREFIX/bin`: the binary's, its
/// messages' and the MCP server's.
pub(crate) const BIN_NAME: &str = "ikigai-tools";
