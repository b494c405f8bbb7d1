//! The supervisor of a job: a detached process that is the shell's parent
//! for as long as the command runs, so that the command outlives the call
//! that started it and its exit status is still collected.
//!
//! Why a process of its own: a host kills the tool at its time limit (by
//! SIGKILL, perhaps its whole process group), and only a parent can reap a
//! process. So the tool forks twice (the middle process leads a new
//! session and exits at once), and the grandchild, in a session and group
//! of its own, stdio on /dev/null and every descriptor it inherited from
//! the host closed, starts the shell exactly as a call does
//! (`super::start`: confinement, guardian and all), drains its output
//! into the job's files, reaps it and records how it ended.
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
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags};
use nix::sys::wait::waitpid;
use nix::unistd::{self, ForkResult};

use super::{cannot_start, exit_code, shell};
use crate::confine::Sandbox;
use crate::jobs::store::{self, Ended, Job};
use crate::jobs::Namespace;
use crate::process::pipes::{self, PIPE_MAX};
use crate::process::{drain_deadline, Group};

/// What the job runs with.
pub struct Plan<'a> {
    pub command: &'a str,
    pub confined: Option<Sandbox<'a>>,
    /// Where an unconfined command starts.
    pub workdir: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub ttl: Duration,
    /// Bytes kept of the head and of the tail.
    pub keep: u64,
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

/// Makes the job and its supervisor.
pub fn start(ns: &Namespace, plan: Plan<'_>) -> io::Result<Started> {
    // The lock is shared with the supervisor through the fork: the job is
    // never without a holder until the supervisor exits.
    let (job, lock) = Job::create(ns, plan.command, plan.keep)?;
    match fork_supervisor(&job, lock, plan) {
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
fn fork_supervisor(job: &Job, lock: File, plan: Plan<'_>) -> io::Result<(OwnedFd, OwnedFd)> {
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
                supervise(job, plan, handoff_r);
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

/// Why the command's group was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    TimedOut,
    Killed,
    /// The starter went away before handing the job over.
    Abandoned,
    Expired,
}

/// The supervisor's life, up to the exit status recorded.
fn supervise(job: &Job, plan: Plan<'_>, handoff: OwnedFd) {
    detach();
    let Ok(mut writer) = job.writer(plan.keep) else {
        let _ = job.record_exit(Ended { exit_code: 127, timed_out: false, killed: false });
        return;
    };
    let Plan { command, confined, workdir, timeout, ttl, .. } = plan;
    let (signals, guardian, mut child, pipe) =
        match super::start(shell::SHELL, command, confined, workdir.as_deref()) {
            Ok(started) => started,
            Err(err) => {
                let _ = writer.append(cannot_start(shell::SHELL, &err).as_bytes());
                let _ = job.record_exit(Ended { exit_code: 127, timed_out: false, killed: false });
                return;
            }
        };
    // Told only now that its stop signals are watched: a job_kill before
    // would have ended it without stopping the command properly.
    let _ = job.write_pid(unistd::getpid().as_raw());
    let began = Instant::now();
    // Checked: a timeout past what the clock holds is none (the call
    // bounds it to a year already).
    let deadline = timeout.and_then(|t| began.checked_add(t));
    let mut pipe = Some(pipe);
    let mut handoff = Some(handoff);
    let mut adopted = false;
    let mut status = None;
    let mut exited_at: Option<Instant> = None;
    let mut stopped: Option<Stopped> = None;
    let mut last_read = Instant::now();
    let mut next_ttl_look = Instant::now();
    let mut buf = vec![0u8; pipes::CHUNK];
    let mut check_child = true;
    loop {
        if exited_at.is_none() && std::mem::take(&mut check_child) {
            match child.try_wait() {
                Ok(None) => {}
                Ok(Some(s)) => {
                    status = Some(s);
                    exited_at = Some(Instant::now());
                }
                Err(_) => exited_at = Some(Instant::now()),
            }
        }
        let now = Instant::now();
        if exited_at.is_none() {
            let timed_out = deadline.is_some_and(|d| now >= d);
            // Once a second: unread for the time to live, or the job's
            // directory removed (nobody could read or stop it any more).
            let expired = adopted && now >= next_ttl_look && {
                next_ttl_look = now + Duration::from_secs(1);
                store::age(job.last_read()) > ttl || !job.still_there()
            };
            let why = if timed_out {
                Some(Stopped::TimedOut)
            } else if expired {
                Some(Stopped::Expired)
            } else {
                None
            };
            if let Some(why) = why {
                stopped = Some(why);
                status = stop(&mut child);
                exited_at = Some(Instant::now());
            }
        }
        let timeout = match exited_at {
            // SIGCHLD, output, a kill all wake the poll; this is the net,
            // and the time to look at the timeout and the time to live.
            None => {
                let mut t = Duration::from_secs(1);
                if let Some(d) = deadline {
                    t = t.min(d.saturating_duration_since(now));
                }
                t
            }
            Some(exited) => {
                if pipe.is_none() {
                    break;
                }
                match drain_deadline(exited, last_read).checked_duration_since(now) {
                    Some(left) if !left.is_zero() => left,
                    _ => {
                        if let Some(p) = pipe.as_mut() {
                            sweep(p, &mut writer, &mut buf);
                        }
                        break;
                    }
                }
            }
        };
        let (signalled, readable, handed) = {
            let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
            if let Some(p) = &pipe {
                fds.push(PollFd::new(p.as_fd(), PollFlags::POLLIN));
            }
            let handoff_at = fds.len();
            if let Some(h) = &handoff {
                fds.push(PollFd::new(h.as_fd(), PollFlags::POLLIN));
            }
            if pipes::wait(&mut fds, timeout) {
                (
                    pipes::is_ready(&fds[0]),
                    pipe.is_some() && pipes::is_ready(&fds[1]),
                    fds.get(handoff_at).is_some_and(pipes::is_ready),
                )
            } else {
                (false, false, false)
            }
        };
        check_child = signalled || !readable;
        if signalled && signals.stop_requested().is_some() && exited_at.is_none() {
            stopped = Some(Stopped::Killed);
            status = stop(&mut child);
            exited_at = Some(Instant::now());
        }
        if handed {
            let mut byte = [0u8; 1];
            adopted = handoff
                .as_ref()
                .is_some_and(|h| matches!(unistd::read(h.as_raw_fd(), &mut byte), Ok(1)));
            handoff = None;
            if !adopted && exited_at.is_none() {
                stopped = Some(Stopped::Abandoned);
                status = stop(&mut child);
                exited_at = Some(Instant::now());
            } else if !adopted {
                stopped = Some(Stopped::Abandoned);
            }
        }
        if readable {
            if let Some(p) = pipe.as_mut() {
                match p.read(&mut buf) {
                    Ok(0) => pipe = None,
                    Ok(n) => {
                        let _ = writer.append(&buf[..n]);
                        last_read = Instant::now();
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                        ) => {}
                    Err(_) => pipe = None,
                }
            }
        }
    }
    // Ended by itself: what it left in the background runs on. Stopped:
    // the group is gone already.
    guardian.release();
    drop(signals);
    if matches!(stopped, Some(Stopped::Abandoned | Stopped::Expired)) {
        // Nobody will ever ask for it: nothing is left behind.
        job.remove();
        return;
    }
    let code = status.map_or(128 + 9, |s| exit_code(Some(s)));
    let ended = Ended {
        exit_code: code,
        timed_out: stopped == Some(Stopped::TimedOut),
        killed: stopped == Some(Stopped::Killed),
    };
    let _ = job.record_exit(ended);
}

/// Stops the command's whole group (SIGTERM, grace, SIGKILL, until gone)
/// and reaps the shell; its status.
fn stop(child: &mut Child) -> Option<std::process::ExitStatus> {
    if let Some(group) = Group::of_child(child) {
        group.stop(|| {
            let _ = child.try_wait();
        });
    }
    // Reaped above (std keeps the status), or now.
    for _ in 0..50 {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(crate::process::TICK);
    }
    None
}

/// What is in the pipe right now, at most the most it can hold.
fn sweep(pipe: &mut File, writer: &mut store::Writer, buf: &mut [u8]) {
    let mut left = PIPE_MAX;
    while left > 0 {
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
        if !(pipes::wait(&mut fds, Duration::ZERO) && pipes::is_ready(&fds[0])) {
            return;
        }
        match pipe.read(buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let _ = writer.append(&buf[..n]);
                left = left.saturating_sub(n);
            }
        }
    }
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
