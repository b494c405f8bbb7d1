//! The command line, the binary's front end: which tool (or host command) a
//! run is, how it was called, what is printed and how the run ends.
//!
//! - `dispatch`: the multicall, by the file name of `argv[0]` or the first
//!   argument of `ikigai-tools`, with `TOOL --schema` answered before clap
//!   builds its tree;
//! - `app`: the clap command tree of the tools and the suite;
//! - `call_form`: a call's form for a person calling by hand (a word where
//!   the JSON goes, a terminal on stdin, the help's examples);
//! - `help`: the help texts (a tool's parameters, the environment) and
//!   the closest name to a mistyped command;
//! - `host`: the `catalog`, `check`, `call` and `list` subcommands over the
//!   [`crate::host`] library;
//! - `doctor`: the `doctor` subcommand, the confinement report;
//! - `exit_code`: the exit statuses, named;
//! - `report`: the messages it makes (a panic, an unknown tool), printed
//!   as every message is by the one printer, `crate::print`.
//!
//! Nothing in the crate prints but through the one printer, `crate::print`
//! (this module, and the MCP server's notices), and nothing else exits: the
//! library returns values and typed errors, and this module tells them.

mod app;
mod call_form;
mod dispatch;
mod doctor;
mod exit_code;
mod help;
mod host;
mod report;

use exit_code::ExitCode;

pub(crate) use crate::BIN_NAME;

/// The entry point of the binary.
pub fn main() -> std::process::ExitCode {
    dispatch::run(std::env::args_os()).into()
}

/// A tool run in a process the MCP server's spawner forked
/// (`mcp::spawner`): as `main` runs a link named `argv0`, returning the
/// status to exit with. Handed to the server as its `mcp::RunTool`, so
/// that the server, below the front end, never names it.
pub(crate) fn run_forked(argv0: std::ffi::OsString) -> i32 {
    i32::from(dispatch::run([argv0]).code())
}
