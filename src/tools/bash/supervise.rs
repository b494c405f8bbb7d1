//! Watching bash's command until it is done (`process::supervise`): its
//! output into the bounded answer; on SIGTERM, SIGINT or SIGHUP, even once
//! the shell has exited, its process group stopped and the tool ended by
//! that signal.

use std::fs::File;
use std::process::{Child, ExitStatus};

use super::signals::{self, Signals};
use crate::limit::Bounded;
use crate::process::supervise::{self as watch, Cause, Watch};

pub struct Supervised {
    pub output: Bounded,
    /// `None` when the status could not be collected.
    pub status: Option<ExitStatus>,
}

/// Runs until the command is done (see `process::supervise`). On SIGTERM,
/// SIGINT or SIGHUP it stops the command's process group and ends the tool.
pub fn supervise(child: Child, pipe: File, mut output: Bounded, signals: &Signals) -> Supervised {
    let ended = watch::supervise(child, pipe, signals, &mut output, &mut Call);
    Supervised { output, status: ended.status }
}

/// A call's limits: none but the host's signals, which end the tool.
struct Call;

impl Watch for Call {
    fn stop_after_exit(&self) -> bool {
        true
    }

    /// The tool is told to stop: the command's group is gone (it had a
    /// grace period to clean up, see `Group::stop`); now the tool, by the
    /// signal it received.
    fn stopped(&mut self, cause: Cause) {
        if let Cause::Signal(sig) = cause {
            signals::die_by(sig)
        }
    }
}
