//! Cancelling a running job from another thread (an MCP server's
//! `notifications/cancelled`): the job's loop polls [`Cancel::fd`] beside
//! its pipes, so it wakes at once and kills the job's whole process group.
//! The loop does the killing, not the cancelling thread: only the loop
//! knows whether the group is still the job's.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use nix::fcntl::OFlag;
use nix::unistd;

/// A cancellation switch; clones share it.
#[derive(Debug, Clone)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    requested: AtomicBool,
    /// Readable once cancelled: wakes a loop that polls it.
    wake_read: OwnedFd,
    wake_write: OwnedFd,
}

impl Cancel {
    pub fn new() -> std::io::Result<Cancel> {
        let (wake_read, wake_write) = unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        let inner = Inner { requested: AtomicBool::new(false), wake_read, wake_write };
        Ok(Cancel { inner: Arc::new(inner) })
    }

    /// Cancels the job; idempotent, callable from any thread.
    pub fn cancel(&self) {
        if !self.inner.requested.swap(true, Ordering::SeqCst) {
            // One byte, never read: the pipe stays readable. The read end
            // is ours, so no SIGPIPE; a full pipe is already readable.
            let _ = unistd::write(&self.inner.wake_write, &[1]);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.requested.load(Ordering::SeqCst)
    }

    /// Readable once [`Cancel::cancel`] has been called.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.inner.wake_read.as_fd()
    }
}
