//! Polling pipes and draining them into a [`Sink`]: the bounded buffer of
//! an answer or of the host side's runs, or a job's files.

use std::io::{ErrorKind, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::TICK;
use crate::limit::Bounded;

/// The largest pipe buffer an unprivileged process may ask for by default
/// (`/proc/sys/fs/pipe-max-size`): 1 MiB.
pub const PIPE_MAX: usize = 1024 * 1024;

/// Bytes read at a time: a quarter of the largest pipe, small enough to
/// stay in the cache while it is copied on.
pub const CHUNK: usize = 256 * 1024;

/// Polls `fds` for at most `timeout`. False when interrupted or refused
/// (then nothing is ready; after a refusal, out of kernel memory, it waits
/// a tick rather than spin).
pub fn wait(fds: &mut [PollFd], timeout: Duration) -> bool {
    match poll(fds, poll_timeout(timeout)) {
        Ok(_) => true,
        Err(Errno::EINTR) => false,
        Err(_) => {
            std::thread::sleep(TICK);
            false
        }
    }
}

/// Whether poll found something on `fd`: data, end of file or an error
/// (either of the last two is for a read to find out).
pub fn is_ready(fd: &PollFd) -> bool {
    let ready = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
    fd.revents().is_some_and(|r| r.intersects(ready))
}

/// Whole milliseconds, rounded up so that a deadline is not polled for in a
/// busy loop just before it passes.
pub fn poll_timeout(d: Duration) -> PollTimeout {
    let ms = d.as_micros().div_ceil(1000).min(u128::from(u16::MAX));
    PollTimeout::from(u16::try_from(ms).unwrap_or(u16::MAX))
}

/// Where what a pipe gives goes.
pub trait Sink {
    /// Takes `bytes` (a sink that cannot keep them drops them: the pipe is
    /// drained all the same, so that the writer never blocks).
    fn take(&mut self, bytes: &[u8]);
}

impl Sink for Bounded {
    fn take(&mut self, bytes: &[u8]) {
        self.push(bytes);
    }
}

/// What one read from a ready pipe gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    /// Bytes, now in the buffer.
    Bytes,
    /// Nothing for now (interrupted, or nothing there after all).
    Nothing,
    /// End of file, or an error: the pipe is done.
    Closed,
}

/// Reads once from a pipe that poll said is ready, into `into`.
pub fn read_into(pipe: &mut (impl Read + ?Sized), into: &mut impl Sink, buf: &mut [u8]) -> Drained {
    match pipe.read(buf) {
        Ok(0) => Drained::Closed,
        Ok(n) => {
            into.take(&buf[..n]);
            Drained::Bytes
        }
        Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {
            Drained::Nothing
        }
        Err(_) => Drained::Closed,
    }
}

/// Takes what is in the pipe right now, at most the most a pipe can hold:
/// everything a process wrote before it exited is there, even when the
/// reader was slow to get to it on a busy machine, and a background writer
/// cannot keep the sweep going.
pub fn sweep(pipe: &mut (impl Read + AsFd), into: &mut impl Sink, buf: &mut [u8]) {
    let mut left = PIPE_MAX;
    while left > 0 {
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
        if !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0) {
            return;
        }
        match pipe.read(buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                into.take(&buf[..n]);
                left = left.saturating_sub(n);
            }
        }
    }
}

/// Makes writes to `fd` non-blocking, so that a loop feeding a pipe never
/// waits on it.
pub fn set_nonblocking(fd: &impl AsRawFd) {
    let _ = fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
}

/// Asks for a pipe of [`PIPE_MAX`] bytes: a command that prints a lot is
/// woken and waited for sixteen times less often. Refused past the user's
/// pipe quota, which only leaves the default size.
pub fn enlarge(fd: &impl AsRawFd) {
    let size = libc::c_int::try_from(PIPE_MAX).unwrap_or(libc::c_int::MAX);
    let _ = fcntl(fd.as_raw_fd(), FcntlArg::F_SETPIPE_SZ(size));
}
