//! Starting bash's command as a job (docs/TOOLS.md, "Jobs"): under a
//! detached supervisor (`jobs::supervisor`), which starts the shell
//! exactly as a call does (`super::start`: confinement, guardian and all).
//! The call then waits for it within the yield (`as_job`).

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::{cannot_start, shell};
use crate::confine::Sandbox;
use crate::jobs::supervisor::{self, Started};
use crate::jobs::Namespace;

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
    /// What the command reads: a pipe or a terminal `job_write` writes to.
    pub input: shell::Input,
}

/// Makes the job and its supervisor.
pub fn start(ns: &Namespace, plan: Plan<'_>) -> io::Result<Started> {
    let Plan { command, confined, workdir, timeout, ttl, keep, input } = plan;
    let launch = move || {
        let (signals, guardian, spawned) =
            super::start(shell::SHELL, command, confined, workdir.as_deref(), input)
                .map_err(|err| cannot_start(shell::SHELL, &err))?;
        Ok(supervisor::Launched {
            signals,
            guardian,
            child: spawned.child,
            output: spawned.output,
            input: spawned.input,
            tty: input == shell::Input::Tty,
        })
    };
    let plan = supervisor::Plan { timeout, ttl, keep, input: input != shell::Input::Null };
    supervisor::start(ns, command, plan, launch)
}
