//! The supervisor of a job: a detached process that is the shell's parent
//! for as long as the command runs, so that the command outlives the call
//! that started it and its exit status is still collected.
//!
//! Why a process of its own: a host kills the tool at its time limit (by
//! SIGKILL, perhaps its whole process group), and only a parent can reap a
//! process. So the tool forks twice (the middle process leads a new
//! session and exits at once), and the grandchild, in a session and group
//! of its own, stdio on /dev/null and every descriptor it inherited from
//! the host closed, starts the shell exactly as a call does (the starter's
//! `launch`: confinement, guardian and all), drains its output into the
//! job's files (`process::supervise`), reaps it and records how it ended.
//!
//! It stops the command's group (SIGTERM, grace, SIGKILL) when:
//! - the `timeout` passes (the job ends `timed_out`);
//! - it is told to (SIGTERM from `job_kill`, SIGINT, SIGHUP);
//! - the starter goes away before it handed the job over (the model never
//!   heard of it: it is stopped and removed, as a call's command would be);
//! - nobody read it for the time to live, or its directory was removed
//!   (stopped and removed: nobody could reach it any more).
//!
//! If the supervisor itself is SIGKILLed, its guardian kills the command's
//! group and the job counts as ended by SIGKILL (`store::Job::ended`):
//! never a job nobody can stop.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::process::Child;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags};
use nix::sys::wait::waitpid;
use nix::unistd::{self, ForkResult};

use super::store::{self, Ended, Job};
use super::{input, Namespace};
use crate::process::pipes;
use crate::process::status::Exit;
use crate::process::supervise::{self as watch, Cause, StopSignals, Watch};
use crate::process::terminal_text::TerminalText;
use crate::process::Guardian;

/// The exit code of a job whose command could not be started: the shell's
/// own code for "command not found" (docs/TOOLS.md, "bash").
const CANNOT_RUN: i64 = 127;

/// A command started for the supervisor to watch.
pub struct Launched<S> {
    pub signals: S,
    pub guardian: Guardian,
    pub child: Child,
    /// Where what it prints is read.
    pub output: File,
    /// Where its stdin is written (a job that reads input).
    pub input: Option<OwnedFd>,
    /// Whether it runs on a pseudo-terminal: what it prints is kept with
    /// the terminal's escapes removed (`process::terminal_text`).
    pub tty: bool,
}

/// What the job runs with.
pub struct Plan {
    pub timeout: Option<Duration>,
    pub ttl: Duration,
    /// Bytes kept of the head and of the tail.
    pub keep: u64,
    /// Whether it reads input (`job_write`): its FIFO is made with the job.
    pub input: bool,
}

/// A job started, as its starter holds it.
pub struct Started {
    pub job: Job,
    /// Written once when the job is handed over; its end without that byte
    /// tells the supervisor the starter is gone.
    handoff: OwnedFd,
    /// Closed by the supervisor's exit: the job has ended (and its exit
    /// status is recorded).
    done: OwnedFd,
}

impl Started {
    /// Waits until the job ends or `wait` passes; whether it ended.
    pub fn wait_end(&self, wait: Duration) -> bool {
        let deadline = Instant::now().checked_add(wait);
        loop {
            let left = deadline
                .map_or(Duration::from_secs(60), |d| d.saturating_duration_since(Instant::now()));
            let mut fds = [PollFd::new(self.done.as_fd(), PollFlags::POLLIN)];
            if pipes::wait(&mut fds, left) && pipes::is_ready(&fds[0]) {
                return true;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
        }
    }

    /// Hands the job over: from now on it runs whatever happens to the
    /// starter.
    pub fn adopt(&self) {
        let _ = unistd::write(&self.handoff, b"1");
    }
}

/// Makes the job of `command` and its supervisor, which starts the command
/// with `launch` (an error is the output the job ends with, exit code 127).
pub fn start<S: StopSignals>(
    ns: &Namespace,
    command: &str,
    plan: Plan,
    launch: impl FnOnce() -> Result<Launched<S>, String>,
) -> io::Result<Started> {
    // The lock is shared with the supervisor through the fork: the job is
    // never without a holder until the supervisor exits.
    let (job, lock) = Job::create(ns, command, plan.keep, plan.input)?;
    match fork_supervisor(&job, lock, plan, launch) {
        Ok((handoff, done)) => Ok(Started { job, handoff, done }),
        Err(e) => {
            // Never started: nothing to leave behind.
            job.remove();
            Err(e)
        }
    }
}

/// Forks the supervisor (see the module doc); the starter's ends of the
/// hand-over and the end pipes.
fn fork_supervisor<S: StopSignals>(
    job: &Job,
    lock: File,
    plan: Plan,
    launch: impl FnOnce() -> Result<Launched<S>, String>,
) -> io::Result<(OwnedFd, OwnedFd)> {
    let (handoff_r, handoff_w) = unistd::pipe2(OFlag::O_CLOEXEC)?;
    let (done_r, done_w) = unistd::pipe2(OFlag::O_CLOEXEC)?;
    // SAFETY: the tool process is single-threaded (a tool run: no runtime,
    // no threads), so the child may run ordinary code; it never returns.
    match unsafe { unistd::fork() }? {
        ForkResult::Child => {
            drop((handoff_w, done_r));
            let _ = unistd::setsid();
            // SAFETY: as above; the middle process exits at once.
            if let Ok(ForkResult::Child) = unsafe { unistd::fork() } {
                supervise(job, plan, handoff_r, launch);
                drop((lock, done_w));
            }
            // SAFETY: ends the process without running the starter's
            // destructors or flushing its buffers.
            unsafe { libc::_exit(0) }
        }
        ForkResult::Parent { child } => {
            drop((handoff_r, done_w, lock));
            while waitpid(child, None) == Err(Errno::EINTR) {}
            Ok((handoff_w, done_r))
        }
    }
}

/// The supervisor's life, up to the exit status recorded.
fn supervise<S: StopSignals>(
    job: &Job,
    plan: Plan,
    handoff: OwnedFd,
    launch: impl FnOnce() -> Result<Launched<S>, String>,
) {
    detach();
    name_in_ps(job);
    let not_run = Ended { exit_code: CANNOT_RUN, timed_out: false, killed: false };
    let Ok(mut writer) = job.writer(plan.keep) else {
        let _ = job.record_exit(not_run);
        return;
    };
    let Launched { signals, guardian, child, output, input, tty } = match launch() {
        Ok(launched) => launched,
        Err(why) => {
            let _ = writer.append(why.as_bytes());
            let _ = job.record_exit(not_run);
            return;
        }
    };
    // Its stdin, forwarded from the job's FIFO; without, nothing can be
    // written to it, and its stdin is closed (end of file).
    if let Some(stdin) = input {
        let _ = input::forward(job, stdin, tty);
    }
    // Told only now that its stop signals are watched: a job_kill before
    // would have ended it without stopping the command properly.
    let _ = job.write_pid(unistd::getpid().as_raw());
    let now = Instant::now();
    let mut limits = Limits {
        job,
        // Checked: a timeout past what the clock holds is none (the call
        // bounds it to a year already).
        deadline: plan.timeout.and_then(|t| now.checked_add(t)),
        ttl: plan.ttl,
        handoff: Some(handoff),
        adopted: false,
        next_ttl_look: now,
    };
    let ended = if tty {
        let mut text = TerminalText::new(&mut writer);
        watch::supervise(child, output, &signals, &mut text, &mut limits)
    } else {
        watch::supervise(child, output, &signals, &mut writer, &mut limits)
    };
    // Ended by itself: what it left in the background runs on. Stopped:
    // the group is gone already.
    guardian.release();
    drop(signals);
    let stopped = ended.stopped;
    if matches!(stopped, Some(Cause::Abandoned | Cause::Expired)) {
        // Nobody will ever ask for it: nothing is left behind.
        job.remove();
        return;
    }
    let exit_code = ended.status.map_or(128 + 9, |s| {
        Exit::from_status(s).map_or(CANNOT_RUN, |e| i64::from(e.shell_code()))
    });
    let _ = job.record_exit(Ended {
        exit_code,
        timed_out: stopped == Some(Cause::TimedOut),
        killed: matches!(stopped, Some(Cause::Signal(_))),
    });
}

/// A job's limits: its timeout, its hand-over, its time to live.
struct Limits<'a> {
    job: &'a Job,
    deadline: Option<Instant>,
    ttl: Duration,
    /// Until the starter hands the job over or goes away.
    handoff: Option<OwnedFd>,
    adopted: bool,
    next_ttl_look: Instant,
}

impl Watch for Limits<'_> {
    /// SIGCHLD, output, a kill and the hand-over all wake the poll; this is
    /// the net, and the time to look at the time to live.
    fn tick(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    fn extra(&self) -> Option<BorrowedFd<'_>> {
        self.handoff.as_ref().map(AsFd::as_fd)
    }

    /// The starter wrote its byte (handed over), or went away without.
    fn extra_ready(&mut self) -> Option<Cause> {
        let mut byte = [0u8; 1];
        self.adopted = self
            .handoff
            .take()
            .is_some_and(|h| matches!(unistd::read(h.as_raw_fd(), &mut byte), Ok(1)));
        (!self.adopted).then_some(Cause::Abandoned)
    }

    /// Once a second: unread for the time to live, or the job's directory
    /// removed (nobody could read or stop it any more).
    fn expired(&mut self, now: Instant) -> bool {
        self.adopted && now >= self.next_ttl_look && {
            self.next_ttl_look = now + Duration::from_secs(1);
            store::age(self.job.last_read()) > self.ttl || !self.job.still_there()
        }
    }
}

/// Named in `ps` as what it is, a job's supervisor, with the job's id (as
/// job_list shows it) and command: forked from the tool that started it,
/// it would show as that tool (`bash`, or the MCP server's command line).
fn name_in_ps(job: &Job) {
    let short = job.id.get(..8).unwrap_or(&job.id);
    let command = job.meta().map(|m| m.command).unwrap_or_default();
    let titles =
        [format!("ikigai-tools job {short}: {command}"), format!("job {short}: {command}")];
    crate::process::title::set(&[&titles[0], &titles[1]], "ikigai-job");
}

/// Out of the starter's world: stdio on /dev/null (a host waiting for the
/// end of the tool's output must not wait for the job), and every
/// descriptor inherited from the host closed. Ours are all close-on-exec;
/// one that is not came from outside (`exec 3>log` in a host).
fn detach() {
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        for fd in 0..=2 {
            // SAFETY: dup2 onto the standard descriptors, which we own.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        // SAFETY: F_GETFD reads a descriptor's flags; EBADF if not open.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
            // SAFETY: closing a descriptor nothing of ours uses.
            unsafe { libc::close(fd) };
        }
    }
}
