//! The guardian: a small process that kills a child's process group when
//! the parent dies outright.
//!
//! The parent-death signal reaches only the direct child: when a tool is
//! killed by SIGKILL, the shell dies with it, but whatever the shell
//! started (`sleep 60 & …`) would run on under init. So before starting
//! the child, the parent forks a guardian (a plain fork, no exec: it costs
//! a page-table copy, not a program start) that holds the read end of a
//! pipe whose only write end the parent keeps:
//!
//! - the child, before exec, writes its pid (its group's id) on the pipe,
//!   so the guardian knows the group before any process is in it;
//! - when the parent dies, however it dies, the kernel closes the write end
//!   and the guardian reads end of file: it kills the group and exits;
//! - on a normal end the parent releases the guardian (SIGKILL, then
//!   reaps it), and the group is left alone: processes the command left
//!   running in the background stay running.
//!
//! The guardian leaves the parent's process group (a host that kills the
//! tool's group must not kill the guardian with it), blocks every signal it
//! can, and closes every descriptor but its pipe, so that it never holds a
//! pipe its parent's host or the command's reader waits on.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{self, kill, killpg, SigSet, SigmaskHow, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::{self, ForkResult, Pid};

/// A running guardian. Dropped without [`Guardian::release`], it kills the
/// group it was told of, as if the parent had died.
#[derive(Debug)]
pub struct Guardian {
    pid: Pid,
    /// The only write end; closing it is the guardian's signal.
    line: Option<OwnedFd>,
}

/// The size of what the child writes: its pid.
const PID_BYTES: usize = std::mem::size_of::<libc::pid_t>();

impl Guardian {
    /// Forks the guardian. Call it before the child is started.
    pub fn start() -> io::Result<Guardian> {
        let (read_end, write_end) = unistd::pipe2(OFlag::O_CLOEXEC)?;
        // SAFETY: the child only makes async-signal-safe system calls (see
        // `guard`) and never returns, so it is sound even in a process with
        // other threads.
        match unsafe { unistd::fork() }? {
            ForkResult::Child => guard(read_end.as_raw_fd()),
            ForkResult::Parent { child } => {
                drop(read_end);
                Ok(Guardian { pid: child, line: Some(write_end) })
            }
        }
    }

    /// The descriptor the child announces itself on, for [`announce`].
    pub fn line(&self) -> RawFd {
        self.line.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// The parent ends normally: the guardian goes, the group stays.
    pub fn release(mut self) {
        // The guardian is our child and not yet reaped: its pid is ours.
        let _ = kill(self.pid, Signal::SIGKILL);
        self.reap();
    }

    fn reap(&mut self) {
        self.line = None;
        loop {
            match waitpid(self.pid, None) {
                Err(Errno::EINTR) => continue,
                _ => return,
            }
        }
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        if self.line.is_some() {
            // End of file: the guardian kills the group and exits.
            self.reap();
        }
    }
}

/// In the child, before exec, after it leads its group: tells the guardian
/// on `line` which group to kill. Async-signal-safe.
pub fn announce(line: RawFd) -> io::Result<()> {
    let pid = unistd::getpid().as_raw().to_ne_bytes();
    // SAFETY: `line` is the parent's write end, inherited and still open
    // (it closes on exec).
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(line) };
    match unistd::write(fd, &pid) {
        // A pipe write of at most PIPE_BUF bytes is whole or nothing.
        Ok(PID_BYTES) => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::EIO)),
        Err(e) => Err(e.into()),
    }
}

/// The guardian's life. Only async-signal-safe system calls: the process
/// it was forked from may have had other threads, holding locks (malloc's)
/// that no thread here will ever release.
fn guard(line: RawFd) -> ! {
    // Named as what it is in `ps -e` and top, not as the tool it was forked
    // from (a second `bash`); prctl is a system call, nothing allocated.
    let _ = nix::sys::prctl::set_name(c"ikigai-guardian");
    let _ = unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0));
    let _ = signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::all()), None);
    close_all_but(line);
    let mut pid = [0u8; PID_BYTES];
    if read_full(line, &mut pid) {
        let group = Pid::from_raw(libc::pid_t::from_ne_bytes(pid));
        // Nothing more is ever written: this returns at end of file, when
        // every write end is closed (the parent has died or dropped us).
        let mut byte = [0u8; 1];
        while matches!(unistd::read(line, &mut byte), Err(Errno::EINTR) | Ok(1..)) {}
        if group.as_raw() > 0 {
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
    // SAFETY: `_exit` ends the process without running anything of the
    // parent's (no atexit handlers, no buffers flushed).
    unsafe { libc::_exit(0) }
}

/// Reads exactly `buf.len()` bytes; false at end of file or on an error.
fn read_full(fd: RawFd, buf: &mut [u8]) -> bool {
    let mut filled = 0;
    while filled < buf.len() {
        match unistd::read(fd, &mut buf[filled..]) {
            Ok(0) => return false,
            Ok(n) => filled += n,
            Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
    true
}

/// Closes every descriptor but `keep` (`close_range`, Linux 5.9; on older
/// kernels the first thousand one by one).
fn close_all_but(keep: RawFd) {
    let Ok(keep) = libc::c_uint::try_from(keep) else { return };
    // SAFETY: closing descriptors this process no longer uses.
    unsafe {
        let below = keep == 0 || libc::syscall(libc::SYS_close_range, 0, keep - 1, 0) == 0;
        let above = libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0) == 0;
        if !(below && above) {
            for fd in 0..1024 {
                if fd != keep as libc::c_int {
                    libc::close(fd);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guardian_with_no_group_exits_when_dropped() {
        let guardian = Guardian::start().unwrap();
        let pid = guardian.pid;
        drop(guardian);
        assert_eq!(kill(pid, None), Err(Errno::ESRCH));
    }

    #[test]
    fn a_released_guardian_is_gone() {
        let guardian = Guardian::start().unwrap();
        let pid = guardian.pid;
        guardian.release();
        assert_eq!(kill(pid, None), Err(Errno::ESRCH));
    }
}
