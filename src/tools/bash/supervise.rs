//! Watching the command until it is done: drain its output pipe into the
//! bounded buffer, reap the shell, and answer for the host's signals.
//!
//! The command is done when the shell has exited and the pipe is at end of
//! file, or has been quiet for a moment: a process the command left running
//! in the background may hold the pipe for ever, and must not hold up the
//! answer (`sleep 60 & echo done`). Such processes are left running.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use super::signals::{self, Signals};
use crate::limit::Bounded;

/// Bytes read from the pipe at a time: a quarter of the pipe (see
/// `shell`), small enough to stay in the cache while it is copied on.
const CHUNK: usize = 256 * 1024;
/// How often the shell is checked on when nothing else happens (SIGCHLD
/// normally wakes the loop at once; this is the safety net).
const TICK: Duration = Duration::from_millis(100);
/// After the shell has exited: how long the pipe may stay quiet before
/// whatever still holds it is left behind…
const QUIET_AFTER_EXIT: Duration = Duration::from_millis(100);
/// …and how long it is drained at most, however busy it stays.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);
/// The final sweep of the pipe reads at most this much: the largest pipe
/// buffer an unprivileged process can ask for (`/proc/sys/fs/pipe-max-size`).
const SWEEP_MAX: usize = 1024 * 1024;
/// When the tool is stopped: how long the command's processes have to end
/// on SIGTERM (git removes its lock files) before they get SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(500);
/// After SIGKILL, how long the tool waits for the group to be gone.
const SETTLE_AFTER_KILL: Duration = Duration::from_millis(300);

pub struct Finished {
    pub output: Bounded,
    /// `None` when the status could not be collected.
    pub status: Option<ExitStatus>,
}

/// Runs until the command is done (see the module doc). On SIGTERM, SIGINT
/// or SIGHUP it stops the command's process group and ends the tool.
pub fn supervise(mut child: Child, pipe: File, mut output: Bounded, signals: &Signals) -> Finished {
    let mut pipe = Some(pipe);
    let mut status: Option<ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    let mut last_read = Instant::now();
    let mut buf = vec![0u8; CHUNK];
    // Whether the shell may have exited since it was last checked on: at
    // first, after a signal (SIGCHLD) and after a quiet tick. Not after
    // every read: a command that prints a lot would pay a system call per
    // read for nothing.
    let mut check_child = true;
    loop {
        if exited_at.is_none() && std::mem::take(&mut check_child) {
            match child.try_wait() {
                Ok(None) => {}
                Ok(Some(s)) => {
                    status = Some(s);
                    exited_at = Some(Instant::now());
                }
                // Not ours to wait for (cannot happen once SIGCHLD is at its
                // default): stop waiting, still drain what is there.
                Err(_) => exited_at = Some(Instant::now()),
            }
        }
        let timeout = match exited_at {
            None => TICK,
            Some(exited) => {
                if pipe.is_none() {
                    break;
                }
                let deadline =
                    (exited + DRAIN_AFTER_EXIT).min(last_read.max(exited) + QUIET_AFTER_EXIT);
                match deadline.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left,
                    _ => {
                        if let Some(p) = pipe.as_mut() {
                            sweep(p, &mut output, &mut buf);
                        }
                        break;
                    }
                }
            }
        };

        let (signalled, readable) = wait_for_events(signals, pipe.as_ref(), timeout);
        check_child = signalled || !readable;
        if signalled {
            if let Some(sig) = signals.stop_requested() {
                stop(&mut child, sig);
            }
        }
        if readable {
            if let Some(p) = pipe.as_mut() {
                match p.read(&mut buf) {
                    Ok(0) => pipe = None,
                    Ok(n) => {
                        output.push(&buf[..n]);
                        last_read = Instant::now();
                    }
                    Err(e)
                        if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {}
                    Err(_) => pipe = None,
                }
            }
        }
    }
    Finished { output, status }
}

/// Takes what is in the pipe right now, up to the most a pipe can hold:
/// everything the shell wrote before it exited is there, even when the tool
/// was slow to get to it on a busy machine.
fn sweep(pipe: &mut File, output: &mut Bounded, buf: &mut [u8]) {
    let mut left = SWEEP_MAX;
    while left > 0 {
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
        let readable = matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0);
        if !readable {
            return;
        }
        match pipe.read(buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                output.push(&buf[..n]);
                left = left.saturating_sub(n);
            }
        }
    }
}

/// Polls the signalfd and the pipe; whether each has something.
fn wait_for_events(signals: &Signals, pipe: Option<&File>, timeout: Duration) -> (bool, bool) {
    let ready = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
    let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
    if let Some(p) = pipe {
        fds.push(PollFd::new(p.as_fd(), PollFlags::POLLIN));
    }
    match poll(&mut fds, poll_timeout(timeout)) {
        Ok(_) => {}
        Err(Errno::EINTR) => return (false, false),
        Err(_) => {
            // Out of kernel memory: wait a little rather than spin.
            std::thread::sleep(TICK);
            return (false, false);
        }
    }
    let has = |fd: &PollFd| fd.revents().is_some_and(|r| r.intersects(ready));
    (has(&fds[0]), fds.get(1).is_some_and(has))
}

/// Whole milliseconds, rounded up so that a deadline is not polled for in a
/// busy loop just before it passes.
fn poll_timeout(d: Duration) -> PollTimeout {
    let ms = d.as_micros().div_ceil(1000).min(u128::from(u16::MAX));
    PollTimeout::from(u16::try_from(ms).unwrap_or(u16::MAX))
}

/// The tool is told to stop: end the command's whole process group, then
/// the tool, by the signal it received. SIGTERM first, so that programs can
/// clean up, SIGKILL for whatever is left after a grace period. (SIGTERM
/// rather than the signal received: background jobs of a non-interactive
/// shell ignore SIGINT.)
fn stop(child: &mut Child, sig: Signal) -> ! {
    // The shell leads its own session, so its pid is the group's id.
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let _ = killpg(group, Signal::SIGTERM);
    let _ = killpg(group, Signal::SIGCONT); // stopped processes must see it
    let deadline = Instant::now() + STOP_GRACE;
    loop {
        // Reap the shell, or it would count as a member still.
        let _ = child.try_wait();
        if kill(Pid::from_raw(-group.as_raw()), None) == Err(Errno::ESRCH) {
            break;
        }
        if Instant::now() >= deadline {
            let _ = killpg(group, Signal::SIGKILL);
            settle(child, group);
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signals::die_by(sig)
}

/// After SIGKILL: death is delivered asynchronously, so wait (bounded) until
/// the shell is reaped and the group is empty, so that the host sees the
/// command gone once the tool has ended. A process stuck in the kernel
/// (uninterruptible I/O) cannot be waited for indefinitely.
fn settle(child: &mut Child, group: Pid) {
    let deadline = Instant::now() + SETTLE_AFTER_KILL;
    while Instant::now() < deadline {
        let shell_reaped = !matches!(child.try_wait(), Ok(None));
        if shell_reaped && kill(Pid::from_raw(-group.as_raw()), None) == Err(Errno::ESRCH) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
