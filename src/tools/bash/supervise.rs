//! Watching the command until it is done: drain its output pipe into the
//! bounded buffer, reap the shell, and answer for the host's signals.
//!
//! The command is done when the shell has exited and the pipe is at end of
//! file, or has been quiet for a moment: a process the command left running
//! in the background may hold the pipe for ever, and must not hold up the
//! answer (`sleep 60 & echo done`). Such processes are left running.

use std::fs::File;
use std::os::fd::AsFd;
use std::process::{Child, ExitStatus};
use std::time::Instant;

use nix::poll::{PollFd, PollFlags};

use super::signals::{self, Signals};
use crate::limit::Bounded;
use crate::process::pipes::{self, Drained};
use crate::process::{drain_deadline, Group, TICK};

pub struct Supervised {
    pub output: Bounded,
    /// `None` when the status could not be collected.
    pub status: Option<ExitStatus>,
}

/// Runs until the command is done (see the module doc). On SIGTERM, SIGINT
/// or SIGHUP it stops the command's process group and ends the tool.
pub fn supervise(
    mut child: Child,
    pipe: File,
    mut output: Bounded,
    signals: &Signals,
) -> Supervised {
    let mut pipe = Some(pipe);
    let mut status: Option<ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    let mut last_read = Instant::now();
    let mut buf = vec![0u8; pipes::CHUNK];
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
            // SIGCHLD wakes the loop at once; the tick is the safety net.
            None => TICK,
            Some(exited) => {
                if pipe.is_none() {
                    break;
                }
                match drain_deadline(exited, last_read).checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left,
                    _ => {
                        if let Some(p) = pipe.as_mut() {
                            pipes::sweep(p, &mut output, &mut buf);
                        }
                        break;
                    }
                }
            }
        };

        let (signalled, readable) = {
            let mut fds = vec![PollFd::new(signals.fd(), PollFlags::POLLIN)];
            if let Some(p) = &pipe {
                fds.push(PollFd::new(p.as_fd(), PollFlags::POLLIN));
            }
            if pipes::wait(&mut fds, timeout) {
                (pipes::is_ready(&fds[0]), fds.get(1).is_some_and(pipes::is_ready))
            } else {
                (false, false)
            }
        };
        check_child = signalled || !readable;
        if signalled {
            if let Some(sig) = signals.stop_requested() {
                stop(&mut child, sig);
            }
        }
        if readable {
            if let Some(p) = pipe.as_mut() {
                match pipes::read_into(p, &mut output, &mut buf) {
                    Drained::Bytes => last_read = Instant::now(),
                    Drained::Nothing => {}
                    Drained::Closed => pipe = None,
                }
            }
        }
    }
    Supervised { output, status }
}

/// The tool is told to stop: end the command's whole process group (it has
/// a grace period to clean up, see `Group::stop`), then the tool, by the
/// signal it received.
fn stop(child: &mut Child, sig: nix::sys::signal::Signal) -> ! {
    // The shell leads its own session, so its pid is the group's id.
    if let Some(group) = Group::of_child(child) {
        group.stop(|| {
            // Reap the shell, or it would count as a member still.
            let _ = child.try_wait();
        });
    }
    signals::die_by(sig)
}
