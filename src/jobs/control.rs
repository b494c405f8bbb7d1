//! What the job tools do with jobs: read what a job printed since the last
//! read (waiting for more if asked), stop one, list them, and remove what
//! is over: a job read to its end, an ended job nobody read for the time
//! to live, every job of an MCP session that ends.

use std::time::{Duration, Instant};

use super::input::{self, NoInput, Written};
use super::store::{self, Ended, Job};
use super::{Namespace, Settings};
use crate::confine::Roots;
use crate::error::ToolError;
use crate::limit::Bounded;
use crate::process::{SETTLE_AFTER_KILL, STOP_GRACE};

/// How often a wait looks at a job again: files cannot be polled, and a
/// twentieth of a second is below what a model notices.
const LOOK_AGAIN: Duration = Duration::from_millis(50);

/// A job still being made after this long was abandoned by its starter
/// (making one takes microseconds).
const MAKING: Duration = Duration::from_secs(2);

/// The most a `wait` blocks when no yield bounds it: ten minutes (an MCP
/// client sees progress meanwhile, and may cancel).
const MAX_WAIT: Duration = Duration::from_secs(600);

/// What `job_output` read of a job.
#[derive(Debug)]
pub struct Output {
    /// What it printed since the last read, bounded (see [`Bounded::finish_parts`]).
    pub parts: Vec<Vec<u8>>,
    /// `None` while it runs.
    pub ended: Option<Ended>,
}

/// `job_output`: what the job printed since the last read (at most `keep`
/// bytes of it, head and tail), whether it runs, and how it ended. With
/// `wait`, blocks (at most that long, and at most the yield) until there
/// is something new or it ends. A job read to its end after it ended is
/// removed.
pub fn output(
    settings: &Settings,
    roots: Option<&Roots>,
    id: &str,
    wait: Duration,
    keep: Option<usize>,
) -> Result<Output, ToolError> {
    let ns = Namespace::open(settings, roots)?;
    sweep(&ns, settings);
    let job = Job::open(&ns, id)?;
    let meta = job.meta().ok_or_else(|| ToolError::JobNotFound(id.to_owned()))?;
    let wait = wait.min(settings.yield_after.unwrap_or(MAX_WAIT));
    let deadline = Instant::now() + wait;
    let seen = job.cursor();
    while job.ended().is_none() && job.count() <= seen && Instant::now() < deadline {
        std::thread::sleep(LOOK_AGAIN.min(deadline.saturating_duration_since(Instant::now())));
    }
    // Only the read itself is one reader's at a time (two would answer
    // the same bytes); a wait does not hold up another call.
    let _reading = job.reading().map_err(|_| ToolError::JobNotFound(id.to_owned()))?;
    // Ended is looked at before the bytes are: once it has ended, the
    // count is final, and what is read below is all of it.
    let ended = job.ended();
    let from = job.cursor();
    let mut out = Bounded::for_answer(keep);
    let end = job.read_since(from, meta.keep, &mut out);
    let _ = job.set_cursor(end);
    if ended.is_some() && end >= job.count() {
        job.remove();
    }
    // The cursor moves past what this answer left out: read once, it is
    // kept nowhere after (docs/TOOLS.md, "Jobs").
    Ok(Output { parts: out.finish_parts_with(crate::limit::marker::not_kept), ended })
}

/// The longest `job_write` waits for a command to make room for its input:
/// a command that is not reading must not hold the call.
const WRITE_BOUND: Duration = Duration::from_secs(2);

/// `job_write`: hands `input` to the job's stdin (then closes it when
/// `close`), waiting at most two seconds (and the yield) for a command
/// that is not reading; what it took, and whether it still runs. A job
/// that takes no input (started without, its stdin closed, ended) is
/// `INVALID_ARG`, saying which.
pub fn write(
    settings: &Settings,
    roots: Option<&Roots>,
    id: &str,
    bytes: &[u8],
    close: bool,
) -> Result<(Written, Option<Ended>), ToolError> {
    let ns = Namespace::open(settings, roots)?;
    sweep(&ns, settings);
    let job = Job::open(&ns, id)?;
    if job.meta().is_none() {
        return Err(ToolError::JobNotFound(id.to_owned()));
    }
    let ended = |e: Ended| {
        ToolError::InvalidArg(format!(
            "job {id} has ended (exit_code {}): nothing reads its input; job_output reads what it printed",
            e.exit_code
        ))
    };
    if let Some(e) = job.ended() {
        return Err(ended(e));
    }
    let bound = WRITE_BOUND.min(settings.yield_after.unwrap_or(WRITE_BOUND));
    match input::write(&job, bytes, close, bound) {
        Ok(written) => Ok((written, job.ended())),
        Err(NoInput::NotReading) => Err(ToolError::InvalidArg(format!(
            "job {id} does not read input: start it with run_in_background or tty"
        ))),
        Err(NoInput::Closed) => Err(ToolError::InvalidArg(format!(
            "job {id} does not read input: its stdin was closed (close_stdin)"
        ))),
        Err(NoInput::Gone) => Err(job.ended().map_or_else(
            || ToolError::InvalidArg(format!("job {id} does not read input any more")),
            ended,
        )),
    }
}

/// `job_kill`: stops the job's whole process group (SIGTERM, a grace,
/// SIGKILL) through its supervisor, which records the exit status; waits
/// until it has. The job stays listed, ended, until its output is read.
/// How it ended (`None`: it still runs, the stop not yet recorded).
pub fn kill(
    settings: &Settings,
    roots: Option<&Roots>,
    id: &str,
) -> Result<Option<Ended>, ToolError> {
    let ns = Namespace::open(settings, roots)?;
    sweep(&ns, settings);
    let job = Job::open(&ns, id)?;
    if job.meta().is_none() {
        return Err(ToolError::JobNotFound(id.to_owned()));
    }
    stop(&job);
    Ok(job.ended())
}

/// Tells the job's supervisor to stop it, and waits (bounded) until it has.
fn stop(job: &Job) {
    let patience = STOP_GRACE + SETTLE_AFTER_KILL + Duration::from_secs(2);
    let deadline = Instant::now() + patience;
    let mut told = false;
    while job.ended().is_none() && Instant::now() < deadline {
        if !told {
            told = job.pid().is_some_and(|pid| signal_supervisor(job, pid));
        }
        std::thread::sleep(super::control::LOOK_AGAIN / 5);
    }
}

/// SIGTERM to the supervisor `pid` of `job`, once it is proven to be
/// that: the pid comes from a file in the job's directory, which only a
/// process that may write the state directory could have forged, but the
/// proof does not trust it. Through a pidfd opened first: a pid reused
/// after that cannot be signalled, and while the pidfd's process lives the
/// pid is its own, so what /proc said of the pid was said of it.
fn signal_supervisor(job: &Job, pid: i32) -> bool {
    use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};
    // Not a process id (0 and below name groups, or every process).
    let Some(process) = Pid::from_raw(pid).filter(|_| pid > 0) else { return false };
    let Ok(pidfd) = pidfd_open(process, PidfdFlags::empty()) else { return false };
    if !is_supervisor(job, pid) {
        return false;
    }
    pidfd_send_signal(&pidfd, Signal::TERM).is_ok()
}

/// Whether process `pid` is the supervisor of `job`: it runs this program
/// (the same file, or the one since replaced at the same path: an upgrade
/// while jobs run), and holds open both the job's directory and its lock,
/// as the supervisor does for as long as it lives. A directory cannot be
/// hard-linked, so no other job's supervisor holds this one's; a process
/// a forger started holds them, but runs inside the forger's sandbox.
fn is_supervisor(job: &Job, pid: i32) -> bool {
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    if !same_program(&proc.join("exe")) {
        return false;
    }
    let Some((dir, lock)) = job.identity() else { return false };
    let Ok(fds) = std::fs::read_dir(proc.join("fd")) else { return false };
    let (mut has_dir, mut has_lock) = (false, false);
    for entry in fds.flatten() {
        // The descriptor's file itself: /proc's links lead to it.
        let Ok(stat) = rustix::fs::stat(entry.path()) else { continue };
        let id = (stat.st_dev, stat.st_ino);
        has_dir |= id == dir;
        has_lock |= id == lock;
    }
    has_dir && has_lock
}

/// Whether `exe` (a process's `/proc/PID/exe`) is this program.
fn same_program(exe: &std::path::Path) -> bool {
    let ours = std::path::Path::new("/proc/self/exe");
    let id = |p: &std::path::Path| rustix::fs::stat(p).ok().map(|s| (s.st_dev, s.st_ino));
    if id(exe).is_some_and(|theirs| Some(theirs) == id(ours)) {
        return true;
    }
    let (Ok(theirs), Ok(ours)) = (std::fs::read_link(exe), std::fs::read_link(ours)) else {
        return false;
    };
    let theirs = theirs.as_os_str().as_encoded_bytes();
    theirs.strip_suffix(b" (deleted)") == Some(ours.as_os_str().as_encoded_bytes())
}

/// One job as `job_list` shows it.
#[derive(Debug)]
pub struct Listed {
    pub id: String,
    pub command: String,
    /// `None` while it runs.
    pub ended: Option<Ended>,
    /// Seconds since it started.
    pub age: u64,
    /// Bytes it printed.
    pub bytes: u64,
    /// Bytes printed that `job_output` has not answered yet: why an ended
    /// job is still listed (it stays until read to its end).
    pub unread: u64,
}

/// `job_list`: every job of the namespace, running or ended and not yet
/// read to its end, in the namespace's order.
pub fn list(settings: &Settings, roots: Option<&Roots>) -> Result<Vec<Listed>, ToolError> {
    let ns = Namespace::open(settings, roots)?;
    sweep(&ns, settings);
    let mut jobs = Vec::new();
    for id in ns.ids() {
        let Ok(job) = Job::open(&ns, &id) else { continue };
        let Some(meta) = job.meta() else { continue };
        // Ended is looked at first: once it has ended, the count is final.
        let ended = job.ended();
        let bytes = job.count();
        jobs.push(Listed {
            ended,
            age: store::now_secs().saturating_sub(meta.started),
            bytes,
            unread: bytes.saturating_sub(job.cursor()),
            command: meta.command,
            id,
        });
    }
    Ok(jobs)
}

/// Removes the ended jobs of `ns` that nobody read for the time to live
/// (running ones are their supervisor's to expire), and those whose making
/// was abandoned.
pub fn sweep(ns: &Namespace, settings: &Settings) {
    Job::sweep_unfinished(ns, MAKING);
    for id in ns.ids() {
        let Ok(job) = Job::open(ns, &id) else { continue };
        if job.ended().is_none() {
            continue;
        }
        let last = job.ended_at().map_or(job.last_read(), |e| e.max(job.last_read()));
        if store::age(last) > settings.ttl {
            job.remove();
        }
    }
}

/// Whether a job of the namespace still runs: an idle MCP session over
/// HTTP is kept while one does.
pub fn any_running(settings: &Settings) -> bool {
    let Ok(ns) = Namespace::open(settings, None) else { return false };
    ns.ids().iter().filter_map(|id| Job::open(&ns, id).ok()).any(|job| job.ended().is_none())
}

/// Ends every job of the namespace and removes them all: an MCP session
/// that ends takes its jobs with it. (The server's own roots are not the
/// calls': only a process proven a job's supervisor is signalled.)
pub fn end_all(settings: &Settings) {
    let Ok(ns) = Namespace::open(settings, None) else { return };
    let jobs: Vec<Job> = ns.ids().iter().filter_map(|id| Job::open(&ns, id).ok()).collect();
    for job in &jobs {
        if job.ended().is_none() {
            if let Some(pid) = job.pid() {
                signal_supervisor(job, pid);
            }
        }
    }
    for job in &jobs {
        stop(job);
    }
    for job in jobs {
        job.remove();
    }
    let _ = std::fs::remove_dir(ns.path());
}
