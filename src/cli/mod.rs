//! The command line, the binary's front end: which tool (or host command) a
//! run is, how it was called, what is printed and how the run ends.
//!
//! - [`dispatch`]: the multicall, by the file name of `argv[0]` or the first
//!   argument of `ikigai-tools`, with `TOOL --schema` answered before clap
//!   builds its tree;
//! - [`app`]: the clap command tree of the tools and the suite;
//! - [`help`]: the help texts (a tool's parameters, the environment) and
//!   the closest name to a mistyped command;
//! - [`host`]: the `catalog`, `check`, `call` and `list` subcommands over the
//!   [`crate::host`] library;
//! - [`exit_code`]: the exit statuses, named;
//! - [`report`]: every message on stderr, one line each.
//!
//! Nothing else in the crate prints or exits: the library returns values and
//! typed errors, and this module tells them.

pub mod app;
pub mod dispatch;
pub mod exit_code;
pub mod help;
pub mod host;
pub mod report;

pub use exit_code::ExitCode;

/// The suite's own name, as installed in `PREFIX/bin`.
pub const BIN_NAME: &str = "ikigai-tools";

/// The entry point of the binary.
pub fn main() -> std::process::ExitCode {
    dispatch::run(std::env::args_os()).into()
}
