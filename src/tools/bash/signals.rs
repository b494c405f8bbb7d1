//! The signals the tool watches while the command runs, through a signalfd
//! so that they wake the same `poll` as the output pipe: SIGTERM, SIGINT and
//! SIGHUP (a host stopping the tool) and SIGCHLD (the shell has exited).

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use nix::sys::signal::{self, SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use crate::fs::signals::{heeded_stop_signals, STOP};
use crate::process::status::signal_exit_code;

/// While it lives, the watched signals are blocked and queue on `fd`;
/// dropping it restores the signal mask.
pub struct Signals {
    fd: SignalFd,
    old_mask: SigSet,
}

impl Signals {
    pub fn watch() -> io::Result<Signals> {
        // A host that ignores SIGCHLD would have the kernel reap the shell
        // and take its exit status with it.
        // SAFETY: installs the default disposition, no handler code.
        unsafe { signal::signal(Signal::SIGCHLD, SigHandler::SigDfl) }?;
        let mut set = SigSet::empty();
        set.add(Signal::SIGCHLD);
        // A signal the host chose to ignore stays ignored (see
        // `heeded_stop_signals`).
        for sig in heeded_stop_signals() {
            set.add(sig);
        }
        let old_mask = set.thread_swap_mask(SigmaskHow::SIG_BLOCK)?;
        match SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK) {
            Ok(fd) => Ok(Signals { fd, old_mask }),
            Err(err) => {
                let _ = old_mask.thread_set_mask();
                Err(err.into())
            }
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Consumes the queued signals; the first request to stop among them.
    /// (SIGCHLD only wakes the caller, who reaps the shell.)
    pub fn stop_requested(&self) -> Option<Signal> {
        let mut stop = None;
        while let Ok(Some(info)) = self.fd.read_signal() {
            let sig = i32::try_from(info.ssi_signo).ok().and_then(|n| Signal::try_from(n).ok());
            if let Some(sig) = sig.filter(|s| STOP.contains(s)) {
                stop.get_or_insert(sig);
            }
        }
        stop
    }
}

impl crate::process::supervise::StopSignals for Signals {
    fn fd(&self) -> BorrowedFd<'_> {
        Signals::fd(self)
    }

    fn stop_requested(&self) -> Option<Signal> {
        Signals::stop_requested(self)
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        let _ = self.old_mask.thread_set_mask();
    }
}

/// Ends the tool by `sig`, as if it had not been caught, so that the host
/// sees the usual status of a process stopped by its signal.
pub fn die_by(sig: Signal) -> ! {
    // SAFETY: the default disposition, no handler code.
    let _ = unsafe { signal::signal(sig, SigHandler::SigDfl) };
    let mut set = SigSet::empty();
    set.add(sig);
    let _ = set.thread_unblock();
    let _ = signal::raise(sig);
    std::process::exit(signal_exit_code(sig as i32))
}
