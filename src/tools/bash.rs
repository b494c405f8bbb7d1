//! bash: runs a shell command and answers `{"output":…,"exit_code":N}`
//! (docs/TOOLS.md, "bash").
//!
//! The tool never answers an error envelope for what the command does: a
//! command that fails, is not found or cannot be started is an answer with
//! its `exit_code`. Only bad input (no `command`, not a string, a NUL byte
//! the kernel cannot pass on) is an `INVALID_ARG` error.
//!
//! - `shell`: how the shell is started (one pipe for stdout and stderr,
//!   stdin from /dev/null, a new session, the parent-death signal, announced
//!   to the guardian);
//! - `signals`: the signals the tool watches while the command runs;
//! - `supervise`: draining the output, reaping the shell, and stopping the
//!   command's process group when the tool is told to stop;
//! - `full`: the full profile's `timeout`, `workdir` and `run_in_background`,
//!   and the yield (docs/TOOLS.md, "Jobs"): a command that may outlive the
//!   call runs under a detached supervisor…
//! - `background`: …which is this: it drains the output into the job's
//!   files, enforces the timeout and the time to live, and records the exit.
//!
//! Processes themselves (groups, the guardian that kills the command's
//! group if the tool is killed outright, pipes, exit statuses) are
//! `crate::process`'s.

mod background;
mod full;
mod shell;
mod signals;
mod supervise;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use crate::confine::Roots;
use crate::context::Context;
use crate::error::ToolError;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::process::status::Exit;
use crate::process::Guardian;
use crate::protocol::{Args, Outcome};

/// The exit code for a command that could not be run at all: the shell's
/// own code for "command not found" (docs/TOOLS.md, "bash").
const CANNOT_RUN: i64 = 127;

/// The output for an empty or blank command. `sh -c ""` would succeed
/// silently; the specification calls it a shell error with exit code 127, and the
/// model should hear why nothing happened.
pub const BLANK_COMMAND: &str = "empty command: nothing to run";

pub fn run(args: &Args, context: &Context) -> Outcome {
    let command = args.required_str("command")?;
    if command.contains('\0') {
        return Err(ToolError::InvalidArg(
            "parameter command must not contain NUL bytes".to_owned(),
        ));
    }
    if command.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty() {
        return Ok(answer(vec![BLANK_COMMAND.as_bytes().to_vec()], CANNOT_RUN));
    }
    if context.profile.is_full() {
        let options = full::Options::read(args, context)?;
        let workdir = options.workdir.clone();
        let confined = match context.roots()? {
            Some(roots) => Some(Confined::prepare(roots, context.network, workdir)?),
            None => None,
        };
        if options.as_job(context) {
            return full::run_as_job(command, confined, &options, context);
        }
        let (output, exit_code) =
            run_in(shell::SHELL, command, confined, options.workdir.as_deref(), context.max_output);
        return Ok(answer(output, exit_code));
    }
    let confined = match context.roots()? {
        Some(roots) => Some(Confined::prepare(roots, context.network, None)?),
        None => None,
    };
    let (output, exit_code) = run_in(shell::SHELL, command, confined, None, context.max_output);
    Ok(answer(output, exit_code))
}

/// With allowed roots (docs/CONFINEMENT.md): the roots,
/// whether the network is open, and the confinement first tried (with a
/// mount namespace). Where the kernel cannot confine the command, the call
/// is refused: never run unconfined.
struct Confined<'r> {
    roots: &'r Roots,
    network: bool,
    first: shell::Confinement,
    /// Where the command starts (full profile's `workdir`), beneath a root.
    workdir: Option<PathBuf>,
}

impl<'r> Confined<'r> {
    fn prepare(
        roots: &'r Roots,
        network: bool,
        workdir: Option<PathBuf>,
    ) -> Result<Confined<'r>, ToolError> {
        let first = shell::Confinement::prepare(roots, network, true, workdir.as_deref())
            .map_err(|e| ToolError::PermissionDenied(e.message()))?;
        Ok(Confined { roots, network, first, workdir })
    }
}

/// What a started command hands its watcher: the signals watched, the
/// guardian, the shell and the read end of its output.
type Started = (signals::Signals, Guardian, std::process::Child, std::fs::File);

/// Starts `command` with the shell at `shell_path`, confined as
/// `confined` says (else in `workdir`, when given); if the kernel gives no
/// mount namespace, once more without one.
fn start(
    shell_path: &str,
    command: &str,
    confined: Option<Confined<'_>>,
    workdir: Option<&Path>,
) -> std::io::Result<Started> {
    let signals = signals::Signals::watch()?;
    let (mut confinement, again) = match confined {
        Some(Confined { roots, network, first, workdir }) => {
            (Some(first), Some((roots, network, workdir)))
        }
        None => (None, None),
    };
    loop {
        // The guardian before the shell: it must know the command's group
        // before any process is in it, and must never hold its output pipe.
        let guardian = Guardian::start()?;
        let namespace = confinement.as_ref().is_some_and(shell::Confinement::has_namespace);
        match shell::spawn(shell_path, command, guardian.line(), confinement.take(), workdir) {
            Ok((child, pipe)) => return Ok((signals, guardian, child, pipe)),
            Err(err) => {
                guardian.release();
                // The kernel gave no namespace (docs/CONFINEMENT.md, "Fail closed"):
                // once more with Landlock and seccomp alone.
                match again {
                    Some((roots, network, ref wd))
                        if namespace && err.raw_os_error() == Some(shell::NO_NAMESPACE) =>
                    {
                        let fallback =
                            shell::Confinement::prepare(roots, network, false, wd.as_deref())
                                .map_err(|e| std::io::Error::other(e.message()))?;
                        confinement = Some(fallback);
                    }
                    _ => return Err(err),
                }
            }
        }
    }
}

/// The output a command that cannot be started answers with.
fn cannot_start(shell_path: &str, err: &std::io::Error) -> String {
    format!("cannot start {shell_path}: {}", describe(err))
}

/// Runs `command` with the shell at `shell_path`; the output (bounded by
/// `max_output`, one trailing newline stripped) and the exit code.
fn run_in(
    shell_path: &str,
    command: &str,
    confined: Option<Confined<'_>>,
    workdir: Option<&Path>,
    max_output: Option<usize>,
) -> (Vec<Vec<u8>>, i64) {
    let workdir = if confined.is_some() { None } else { workdir };
    let (signals, guardian, child, pipe) = match start(shell_path, command, confined, workdir) {
        Ok(started) => started,
        Err(err) => return (vec![cannot_start(shell_path, &err).into_bytes()], CANNOT_RUN),
    };
    let finished = supervise::supervise(child, pipe, Bounded::for_answer(max_output), &signals);
    // The shell has exited by itself: what it left running in the
    // background stays running, even if the tool is killed from now on.
    guardian.release();
    // Restore the signal mask before the answer is written: a host that
    // times out while the tool writes must still be able to stop it.
    drop(signals);
    let mut output = finished.output.finish_parts();
    limit::strip_final_newline(&mut output);
    (output, exit_code(finished.status))
}

/// The exit status as docs/TOOLS.md counts it: the status, 128+N for a command
/// killed by signal N.
fn exit_code(status: Option<ExitStatus>) -> i64 {
    // None: the status could not be collected (nothing a normal run meets).
    status.and_then(Exit::from_status).map_or(CANNOT_RUN, |exit| i64::from(exit.shell_code()))
}

/// An OS error as `strerror` words, without Rust's "(os error N)".
fn describe(err: &std::io::Error) -> String {
    match err.raw_os_error() {
        Some(n) => nix::errno::Errno::from_raw(n).desc().to_owned(),
        None => err.to_string(),
    }
}

fn answer(output: Vec<Vec<u8>>, exit_code: i64) -> Vec<(&'static str, Field)> {
    vec![("output", Field::Parts(output)), ("exit_code", Field::Int(exit_code))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_that_cannot_start_is_exit_127() {
        let (output, code) = run_in("/nonexistent/sh", "echo hi", None, None, None);
        assert_eq!(
            String::from_utf8(output.concat()).unwrap(),
            "cannot start /nonexistent/sh: No such file or directory"
        );
        assert_eq!(code, 127);
    }

    #[test]
    fn a_shell_that_is_not_executable_is_exit_127() {
        let (output, code) = run_in("/dev/null", "echo hi", None, None, None);
        assert_eq!(
            String::from_utf8(output.concat()).unwrap(),
            "cannot start /dev/null: Permission denied"
        );
        assert_eq!(code, 127);
    }
}
