//! bash's parameters (src/tools/bash.full.schema.json), read and
//! type-checked once. The seed profile's call is the full one with the
//! defaults (docs/TOOLS.md, "bash").

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::context::Context;
use crate::error::{Kind, ToolError, Why};
use crate::fs::looked_up;
use crate::jobs::settings::LONGEST;
use crate::protocol::Args;

use super::shell::Input;

/// One bash call's parameters.
#[derive(Debug)]
pub struct Request<'a> {
    pub command: &'a str,
    /// Stops the command after this long (`timed_out: true`).
    pub timeout: Option<Duration>,
    /// Where the command starts.
    pub workdir: Option<PathBuf>,
    /// `run_in_background`: answer at once with the job's id.
    pub background: bool,
    /// `tty`: run on a pseudo-terminal, as a job (docs/TOOLS.md, "Talking
    /// to a job").
    pub tty: bool,
}

impl<'a> Request<'a> {
    /// Reads every parameter, in this order: `command`, `timeout`,
    /// `workdir`, `run_in_background`, `tty`; the first one wrong is the
    /// error.
    pub fn parse(args: &'a Args) -> Result<Self, ToolError> {
        let command = command(args)?;
        let timeout = match args.optional_int("timeout")? {
            None => None,
            // At most a year: a deadline past what a clock can hold would
            // end the supervisor (and the output with it).
            Some(n) if n > 0 => Some(Duration::from_secs(n.unsigned_abs()).min(LONGEST)),
            Some(_) => {
                return Err(ToolError::InvalidArg(
                    "parameter timeout must be a positive number of seconds".to_owned(),
                ))
            }
        };
        let workdir = args.optional_path("workdir")?.map(PathBuf::from);
        let background = args.optional_bool("run_in_background")?.unwrap_or(false);
        let tty = args.optional_bool("tty")?.unwrap_or(false);
        Ok(Request { command, timeout, workdir, background, tty })
    }

    /// Whether the command runs under a supervisor: it may outlive the call
    /// (docs/TOOLS.md, "Jobs"), or is to be talked to.
    pub fn as_job(&self, context: &Context) -> bool {
        self.background || self.tty || self.timeout.is_some() || context.jobs.yield_after.is_some()
    }

    /// What the command reads: a terminal with `tty`, a pipe in the
    /// background, else /dev/null (a foreground command that yields too:
    /// docs/TOOLS.md, "Talking to a job").
    pub fn input(&self) -> Input {
        match (self.tty, self.background) {
            (true, _) => Input::Tty,
            (false, true) => Input::Pipe,
            (false, false) => Input::Null,
        }
    }

    /// A `workdir` that is missing or not a directory is an error answer (a
    /// confined one is then checked beneath the roots, by the confined
    /// opener).
    pub fn check_workdir(&self, context: &Context) -> Result<(), ToolError> {
        match &self.workdir {
            Some(dir) => check_dir(dir, context),
            None => Ok(()),
        }
    }
}

/// The command: a string the kernel can pass on (no NUL byte).
fn command(args: &Args) -> Result<&str, ToolError> {
    let command = args.required_str("command")?;
    if command.contains('\0') {
        return Err(ToolError::InvalidArg(
            "parameter command must not contain NUL bytes".to_owned(),
        ));
    }
    Ok(command)
}

fn check_dir(dir: &Path, context: &Context) -> Result<(), ToolError> {
    let shown = dir.display().to_string();
    let full = match context.roots() {
        Ok(Some(roots)) => roots.working_dir().join(dir),
        _ => dir.to_path_buf(),
    };
    match std::fs::metadata(&full) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(meta) => {
            Err(ToolError::OpenFailed(shown).because(Why::Kind(Kind::of_type(meta.file_type()))))
        }
        Err(e) => {
            let err = ToolError::from_io(&e, &shown, ToolError::OpenFailed);
            Err(looked_up::explain(err, &shown, context.roots().ok().flatten()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> Args {
        Args::parse(json.as_bytes()).unwrap()
    }

    /// The message `Request::parse` refuses `json` with.
    fn refused(json: &str) -> String {
        Request::parse(&args(json)).unwrap_err().to_string()
    }

    #[test]
    fn the_seed_call_is_the_full_one_with_the_defaults() {
        let args = args(r#"{"command":"true"}"#);
        let request = Request::parse(&args).unwrap();
        assert_eq!(
            (request.command, request.timeout, request.workdir, request.background),
            ("true", None, None, false)
        );
    }

    #[test]
    fn every_parameter_is_read() {
        let args = args(r#"{"command":"x","timeout":5,"workdir":"d","run_in_background":true}"#);
        let request = Request::parse(&args).unwrap();
        assert_eq!(
            (request.timeout, request.workdir, request.background),
            (Some(Duration::from_secs(5)), Some(PathBuf::from("d")), true)
        );
    }

    /// The first parameter wrong, in the order command, timeout, workdir,
    /// run_in_background, is the error.
    #[test]
    fn the_first_wrong_parameter_is_the_error() {
        let all_wrong = r#""timeout":0,"workdir":1,"run_in_background":"yes""#;
        assert_eq!(refused(&format!("{{{all_wrong}}}")), "missing required parameter: command");
        assert_eq!(
            refused(&format!(r#"{{"command":"a\u0000b",{all_wrong}}}"#)),
            "parameter command must not contain NUL bytes"
        );
        assert_eq!(
            refused(&format!(r#"{{"command":"x",{all_wrong}}}"#)),
            "parameter timeout must be a positive number of seconds"
        );
        assert_eq!(
            refused(r#"{"command":"x","workdir":1,"run_in_background":"yes"}"#),
            "parameter workdir must be a string"
        );
        assert_eq!(
            refused(r#"{"command":"x","run_in_background":"yes"}"#),
            "parameter run_in_background must be a boolean"
        );
    }

    /// Read once and whole: a blank command (answered with exit code 127
    /// by `bash::run`) does not hide a wrong parameter.
    #[test]
    fn a_blank_command_does_not_hide_a_wrong_parameter() {
        assert_eq!(
            refused(r#"{"command":" ","timeout":-1}"#),
            "parameter timeout must be a positive number of seconds"
        );
    }

    /// `tty` is read last and says what the command reads:
    /// a terminal; `run_in_background` alone, a pipe; else /dev/null.
    #[test]
    fn tty_is_read_last_and_says_what_the_command_reads() {
        assert_eq!(
            refused(r#"{"command":"x","run_in_background":1,"tty":"yes"}"#),
            "parameter run_in_background must be a boolean"
        );
        assert_eq!(refused(r#"{"command":"x","tty":"yes"}"#), "parameter tty must be a boolean");
        let of = |json: &str| Request::parse(&args(json)).unwrap().input();
        assert_eq!(of(r#"{"command":"x","tty":true}"#), Input::Tty);
        assert_eq!(of(r#"{"command":"x","tty":true,"run_in_background":true}"#), Input::Tty);
        assert_eq!(of(r#"{"command":"x","run_in_background":true}"#), Input::Pipe);
        assert_eq!(of(r#"{"command":"x","timeout":5}"#), Input::Null);
    }

    #[test]
    fn a_timeout_is_capped_at_a_year() {
        let args = args(r#"{"command":"x","timeout":1e300}"#);
        assert_eq!(Request::parse(&args).unwrap().timeout, Some(LONGEST));
    }
}
