//! How a process ended, and the shell's way of counting a death by signal.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use nix::sys::wait::WaitStatus;

/// A process killed by signal N is reported as `SIGNAL_EXIT_BASE + N`, as
/// a shell reports it (`$?` is 137 after SIGKILL); docs/SPEC.md counts so.
pub const SIGNAL_EXIT_BASE: i32 = 128;

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

impl Exit {
    pub fn from_status(status: ExitStatus) -> Option<Exit> {
        match (status.code(), status.signal()) {
            (Some(code), _) => Some(Exit::Code(code)),
            (None, Some(sig)) => Some(Exit::Signal(sig)),
            (None, None) => None,
        }
    }

    /// None for a process that has not ended (stopped, continued, alive).
    pub fn from_wait(status: WaitStatus) -> Option<Exit> {
        match status {
            WaitStatus::Exited(_, code) => Some(Exit::Code(code)),
            WaitStatus::Signaled(_, sig, _) => Some(Exit::Signal(sig as i32)),
            _ => None,
        }
    }

    /// The exit code as a shell reports it: the code, or 128+N.
    pub fn shell_code(self) -> i32 {
        match self {
            Exit::Code(code) => code,
            Exit::Signal(sig) => signal_exit_code(sig),
        }
    }
}

/// The exit code a shell reports for a death by signal `sig`.
pub fn signal_exit_code(sig: i32) -> i32 {
    SIGNAL_EXIT_BASE + sig
}
