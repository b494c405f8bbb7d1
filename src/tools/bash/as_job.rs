//! A bash command that may outlive its call (docs/TOOLS.md, "Jobs": a
//! yield is in force, or it runs in the background, or has a timeout)
//! runs under a supervisor (`background`); the call waits for it, at most
//! the yield, on a pipe the supervisor closes when it exits. Ended in time,
//! it answers as bash always answers (with `timed_out: true` when the
//! timeout stopped it) and leaves nothing behind; else it answers what was
//! printed so far and the `job_id` the job runs on as.

use std::time::Duration;

use super::background::{self, Plan};
use super::request::Request;
use super::sandbox_note::SandboxNote;
use super::{answer, cannot_start, shell, CANNOT_RUN};
use crate::confine::Sandbox;
use crate::context::Context;
use crate::jobs::control;
use crate::jobs::store::{MAX_KEEP, MIN_KEEP};
use crate::jobs::Namespace;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::protocol::{Answer, Outcome};
use crate::tools::job_output::state_fields;

/// How long a command run in the background is watched before the call
/// answers: long enough for its first lines (or an error of the shell's),
/// short enough to count as at once.
const FIRST_LOOK: Duration = Duration::from_millis(200);

/// How long a `tty` command started in the foreground is watched (at most
/// the yield) before the call answers with its job_id: a program that
/// talks on a terminal shows its prompt by then, and waits for input no
/// yield would bring.
const TTY_FIRST_LOOK: Duration = Duration::from_secs(1);

/// What a job's answer holds beside the output, past
/// `limit::ANSWER_RESERVE`: the note, the id, `running`.
const JOB_RESERVE: usize = 256;

/// Runs the request's command under a supervisor (see the module doc).
pub fn run(request: &Request<'_>, sandbox: Option<Sandbox<'_>>, context: &Context) -> Outcome {
    // Refused where a confined command could write the state directory.
    let ns = Namespace::open(&context.jobs, context.roots()?)?;
    control::sweep(&ns, &context.jobs);
    let keep = context.answer_limit(0).map_or(MAX_KEEP, |l| l as u64).clamp(MIN_KEEP, MAX_KEEP);
    let workdir = if sandbox.is_some() { None } else { request.workdir.clone() };
    let note = sandbox.as_ref().map(SandboxNote::for_sandbox);
    let plan = Plan {
        command: request.command,
        confined: sandbox,
        workdir,
        timeout: request.timeout,
        ttl: context.jobs.ttl,
        keep,
        input: request.input(),
    };
    let started = match background::start(&ns, plan) {
        Ok(started) => started,
        Err(err) => {
            let text = cannot_start(shell::SHELL, &err);
            return Ok(answer(vec![text.into_bytes()], CANNOT_RUN));
        }
    };
    let job = &started.job;
    if !request.background {
        let mut wait = context.jobs.yield_after.unwrap_or(Duration::MAX);
        if request.tty {
            wait = wait.min(TTY_FIRST_LOOK);
        }
        if started.wait_end(wait) {
            let ended = job.ended();
            let reserve = note.as_ref().map_or(0, SandboxNote::reserve);
            let mut out = Bounded::for_answer(context.answer_limit(reserve));
            job.read_since(0, keep, &mut out);
            job.remove();
            let mut output = out.finish_parts_with(limit::marker::not_kept);
            limit::strip_final_newline(&mut output);
            let ended = ended.unwrap_or(crate::jobs::store::Ended {
                exit_code: 128 + 9,
                timed_out: false,
                killed: true,
            });
            if let Some(note) = &note {
                note.add_to(&mut output, ended.exit_code);
            }
            let mut fields = answer(output, ended.exit_code);
            if ended.timed_out {
                fields.push(("timed_out", Field::Bool(true)));
            }
            return Ok(fields);
        }
    } else {
        started.wait_end(FIRST_LOOK);
    }
    // Handed over: from here on the job runs whatever becomes of this call.
    started.adopt();
    let ended = job.ended();
    let mut out = Bounded::for_answer(context.answer_limit(JOB_RESERVE));
    let end = job.read_since(0, keep, &mut out);
    let _ = job.set_cursor(end);
    let mut output = out.finish_parts_with(limit::marker::not_kept);
    if ended.is_none() {
        let note = if request.tty {
            format!(
                "\n[running as job {} on a terminal: job_write with this job_id types input \
                 (\\n for Enter, \\u0003 for Ctrl-C), job_output reads what it shows next; \
                 job_kill stops it]",
                job.id
            )
        } else {
            format!(
                "\n[running as job {}: job_output with this job_id reads what it prints next \
                 and its exit_code; job_kill stops it]",
                job.id
            )
        };
        output.push(note.into_bytes());
    }
    let mut fields: Answer =
        vec![("output", Field::Parts(output)), ("job_id", Field::Text(job.id.as_bytes().to_vec()))];
    fields.extend(state_fields(ended));
    Ok(fields)
}
