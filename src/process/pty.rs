//! A pseudo-terminal for a command that needs one (bash's `tty`,
//! docs/TOOLS.md, "Talking to a job"): the master stays with the job's
//! supervisor (it reads what the terminal shows and writes what is typed),
//! the slave becomes the command's stdin, stdout, stderr and controlling
//! terminal, so that `\x03` written to it interrupts and full-screen
//! programs find a terminal.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use nix::fcntl::OFlag;
use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};

/// The terminal's size: the classic 80 × 24, which every program lays out
/// for, and the fewest bytes a full-screen program redraws.
pub const COLUMNS: u16 = 80;
pub const ROWS: u16 = 24;

/// A new pseudo-terminal, both ends close-on-exec (nothing but the command's
/// stdio ever holds the slave); its size set.
pub struct Pty {
    pub master: OwnedFd,
    pub slave: OwnedFd,
}

impl Pty {
    pub fn open() -> io::Result<Pty> {
        let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let name = ptsname_r(&master)?;
        let slave = nix::fcntl::open(
            name.as_str(),
            OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )?;
        // SAFETY: `open` just returned this descriptor, owned by nothing else.
        let slave = unsafe { OwnedFd::from_raw_fd(slave) };
        let size = libc::winsize { ws_row: ROWS, ws_col: COLUMNS, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCSWINSZ reads the `winsize` owned by this frame.
        if unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, &size) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `into_raw_fd` hands over the descriptor, owned by nothing else.
        let master = unsafe { OwnedFd::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(master)) };
        Ok(Pty { master, slave })
    }
}

/// In the child, after `setsid` and once the slave is its stdin: makes it
/// the session's controlling terminal (async-signal-safe: one ioctl).
pub fn in_take_as_controlling() -> io::Result<()> {
    // SAFETY: TIOCSCTTY on descriptor 0 with argument 0 (do not steal a
    // terminal another session holds).
    if unsafe { libc::ioctl(0, libc::TIOCSCTTY, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pty_has_its_size_and_passes_bytes_both_ways() {
        let pty = Pty::open().unwrap();
        let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCGWINSZ writes the `winsize` owned by this frame.
        assert_eq!(unsafe { libc::ioctl(pty.slave.as_raw_fd(), libc::TIOCGWINSZ, &mut size) }, 0);
        assert_eq!((size.ws_col, size.ws_row), (COLUMNS, ROWS));
        nix::unistd::write(&pty.master, b"hi\n").unwrap();
        let mut buf = [0u8; 16];
        let n = nix::unistd::read(pty.slave.as_raw_fd(), &mut buf).unwrap();
        assert_eq!(&buf[..n], b"hi\n");
    }
}
