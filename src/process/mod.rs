//! Child processes, for the bash tool and the host side alike: each started
//! in a process group of its own, its pipes polled and drained into bounded
//! buffers, and stopped as a group (SIGTERM, a grace period, SIGKILL, then a
//! bounded wait until the group is gone).
//!
//! - [`group`]: starting a child as the leader of a new session or group,
//!   the parent-death signal, signalling and stopping a whole group;
//! - [`guardian`]: a small process that kills a group when its owner dies
//!   outright (SIGKILL), which the parent-death signal alone cannot do for
//!   the grandchildren;
//! - [`pipes`]: polling pipes and draining them into a sink;
//! - [`supervise`]: watching one command to its end (bash's call, a job's
//!   supervisor): one loop, its states, and one policy for what ends it;
//! - [`pty`]: a pseudo-terminal for a command started with `tty`;
//! - [`terminal_text`]: what a terminal shows, its escapes removed;
//! - [`status`]: how a process ended, and the shell's 128+N for a signal;
//! - [`title`]: a forked process's command line and name in `ps`;
//! - [`timed`]: running processes as a host runs tools, several at once, with
//!   a time limit.
//!
//! A process that leaves its group (`setsid`, `setpgid`) is out of reach of
//! all of this: only a sandbox (a cgroup, a PID namespace) could follow it.

use std::time::{Duration, Instant};

pub mod group;
pub mod guardian;
pub mod pipes;
pub mod pty;
pub mod status;
pub mod supervise;
pub mod terminal_text;
pub mod timed;
pub mod title;

pub use group::Group;
pub use guardian::Guardian;
pub use timed::{run, run_all, Captured, Finished, Input, Status, TimedRun};

/// How long a group told to stop (SIGTERM) has to end before SIGKILL. Long
/// enough for programs to clean up on a busy machine (git removes its lock
/// files in microseconds; a compiler deletes its temporary files), short
/// enough that a timeout or a stop costs at most half a second more, and
/// that the whole stop fits in the second the contract allows.
pub const STOP_GRACE: Duration = Duration::from_millis(500);

/// After SIGKILL: how long to wait for the group to be gone. Death is
/// delivered asynchronously and usually takes microseconds; a process stuck
/// in the kernel (uninterruptible I/O), or a zombie nobody reaps (a
/// container whose init does not reap orphans), cannot be waited for
/// indefinitely.
pub const SETTLE_AFTER_KILL: Duration = Duration::from_millis(300);

/// How often a loop looks again when nothing it polls can tell it (an exit
/// noticed without a signal, a deadline, a grace period). 10 ms is below
/// what a person or a model notices, and a hundred wake-ups a second cost
/// nothing measurable.
pub const TICK: Duration = Duration::from_millis(10);

/// After a process has exited: how long its pipes may stay quiet before
/// whatever still holds them (a background child) is left behind…
pub const QUIET_AFTER_EXIT: Duration = Duration::from_millis(100);

/// …and how long they are drained at most, however busy they stay (the
/// contract's "returns within about a second").
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// When the pipes of a process that exited at `exited`, and whose pipes
/// last gave something at `last_read`, are left to whatever still holds
/// them: once they have been quiet for `QUIET_AFTER_EXIT` since the exit
/// or the last read, and `DRAIN_AFTER_EXIT` after the exit at the latest.
pub fn drain_deadline(exited: Instant, last_read: Instant) -> Instant {
    (exited + DRAIN_AFTER_EXIT).min(last_read.max(exited) + QUIET_AFTER_EXIT)
}
