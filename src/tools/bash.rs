//! bash: runs a shell command and answers `{"output":…,"exit_code":N}`
//! (docs/TOOLS.md, "bash").
//!
//! The tool never answers an error envelope for what the command does: a
//! command that fails, is not found or cannot be started is an answer with
//! its `exit_code`. Only bad input (no `command`, not a string, a NUL byte
//! the kernel cannot pass on) is an `INVALID_ARG` error.
//!
//! - `request`: the parameters, read once; the seed profile's call is the
//!   full one with the defaults;
//! - `shell`: how the shell is started (one pipe for stdout and stderr,
//!   stdin from /dev/null, a new session, the parent-death signal, announced
//!   to the guardian); what confines it is `crate::confine::sandbox`'s;
//! - `sandbox_note`: the note after a confined command's failure that the
//!   sandbox likely caused (a write outside the roots, the network shut);
//! - `signals`: the signals the tool watches while the command runs;
//! - `supervise`: bash's call of the one supervision loop
//!   (`crate::process::supervise`): the output drained, the shell reaped,
//!   the command's process group stopped when the tool is told to stop;
//! - `as_job`: a command that may outlive the call (`timeout`,
//!   `run_in_background`, the yield: docs/TOOLS.md, "Jobs") runs as a job,
//!   and the call waits for it within the yield;
//! - `background`: starts the command under the job supervisor
//!   (`crate::jobs::supervisor`), which drains the output into the job's
//!   files, enforces the timeout and the time to live, and records the exit.
//!
//! Processes themselves (groups, the guardian that kills the command's
//! group if the tool is killed outright, pipes, exit statuses) are
//! `crate::process`'s.

mod as_job;
mod background;
mod request;
mod sandbox_note;
mod shell;
mod signals;
mod supervise;

use std::path::Path;
use std::process::ExitStatus;

use crate::confine::Sandbox;
use crate::context::Context;
use crate::error::ToolError;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::process::status::Exit;
use crate::process::Guardian;
use crate::protocol::{Args, Outcome};
use request::Request;
use sandbox_note::SandboxNote;

/// The exit code for a command that could not be run at all: the shell's
/// own code for "command not found" (docs/TOOLS.md, "bash").
const CANNOT_RUN: i64 = 127;

/// The output for an empty or blank command. `sh -c ""` would succeed
/// silently; the specification calls it a shell error with exit code 127, and the
/// model should hear why nothing happened.
pub const BLANK_COMMAND: &str = "empty command: nothing to run";

pub fn run(args: &Args, context: &Context) -> Outcome {
    // The seed profile's call is the full request with its defaults: the
    // name rule (`tools::params`) has refused any full-profile parameter.
    let request = Request::parse(args)?;
    let command = request.command;
    if command.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty() {
        return Ok(answer(vec![BLANK_COMMAND.as_bytes().to_vec()], CANNOT_RUN));
    }
    request.check_workdir(context)?;
    // Where the kernel cannot confine the command, the call is refused:
    // never run unconfined (docs/CONFINEMENT.md).
    let sandbox = match context.roots()? {
        Some(roots) => Some(
            Sandbox::prepare(roots, context.network, request.workdir.clone())
                .map_err(|e| ToolError::PermissionDenied(e.message()))?,
        ),
        None => None,
    };
    if request.as_job(context) {
        return as_job::run(&request, sandbox, context);
    }
    // A failure the sandbox caused says so after the output, within the
    // limit (docs/CONFINEMENT.md, "What a confined call is told").
    let note = sandbox.as_ref().map(SandboxNote::for_sandbox);
    let limit = context.answer_limit(note.as_ref().map_or(0, SandboxNote::reserve));
    let (mut output, exit_code) =
        run_in(shell::SHELL, command, sandbox, request.workdir.as_deref(), limit);
    if let Some(note) = note {
        note.add_to(&mut output, exit_code);
    }
    Ok(answer(output, exit_code))
}

/// What a started command hands its watcher: the signals watched, the
/// guardian, and the shell with its ends.
type Started = (signals::Signals, Guardian, shell::Spawned);

/// Starts `command` with the shell at `shell_path`, in `sandbox` (else in
/// `workdir`, when given), its input as `input` says.
fn start(
    shell_path: &str,
    command: &str,
    sandbox: Option<Sandbox<'_>>,
    workdir: Option<&Path>,
    input: shell::Input,
) -> std::io::Result<Started> {
    let signals = signals::Signals::watch()?;
    let spawn = |confinement| {
        // The guardian before the shell: it must know the command's group
        // before any process is in it, and must never hold its output pipe.
        let guardian = Guardian::start()?;
        match shell::spawn(shell_path, command, guardian.line(), confinement, workdir, input) {
            Ok(spawned) => Ok((guardian, spawned)),
            Err(err) => {
                guardian.release();
                Err(err)
            }
        }
    };
    let (guardian, spawned) = match sandbox {
        Some(sandbox) => sandbox.spawn(|prepared| spawn(Some(prepared)))?,
        None => spawn(None)?,
    };
    Ok((signals, guardian, spawned))
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
    sandbox: Option<Sandbox<'_>>,
    workdir: Option<&Path>,
    max_output: Option<usize>,
) -> (Vec<Vec<u8>>, i64) {
    let workdir = if sandbox.is_some() { None } else { workdir };
    let started = start(shell_path, command, sandbox, workdir, shell::Input::Null);
    let (signals, guardian, spawned) = match started {
        Ok(started) => started,
        Err(err) => return (vec![cannot_start(shell_path, &err).into_bytes()], CANNOT_RUN),
    };
    let shell::Spawned { child, output, .. } = spawned;
    let finished = supervise::supervise(child, output, Bounded::for_answer(max_output), &signals);
    // The shell has exited by itself: what it left running in the
    // background stays running, even if the tool is killed from now on.
    guardian.release();
    // Restore the signal mask before the answer is written: a host that
    // times out while the tool writes must still be able to stop it.
    drop(signals);
    // The middle is kept nowhere: the marker says how to run again.
    let mut output = finished.output.finish_parts_with(limit::marker::not_kept);
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
