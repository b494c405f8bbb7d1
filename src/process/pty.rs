//! A pseudo-terminal for a command that needs one (bash's `tty`,
//! docs/TOOLS.md, "Talking to a job"): the master stays with the job's
//! supervisor (it reads what the terminal shows and writes what is typed),
//! the slave becomes the command's stdin, stdout, stderr and controlling
//! terminal, so that `\x03` written to it interrupts and full-screen
//! programs find a terminal.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;

/// The terminal's size: the classic 80 × 24, which every program lays out
/// for, and the fewest bytes a full-screen program redraws.
pub const COLUMNS: u16 = 80;
pub const ROWS: u16 = 24;

/// A new pseudo-terminal, both ends close-on-exec (nothing but the command's
/// stdio ever holds the slave), its size set.
pub struct Pty {
    pub master: OwnedFd,
    pub slave: OwnedFd,
}

impl Pty {
    pub fn open() -> io::Result<Pty> {
        let master =
            rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
        rustix::pty::grantpt(&master)?;
        rustix::pty::unlockpt(&master)?;
        let name = rustix::pty::ptsname(&master, Vec::new())?;
        let slave = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let size = Winsize { ws_row: ROWS, ws_col: COLUMNS, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(&slave, size)?;
        Ok(Pty { master, slave })
    }
}

/// In the child, after `setsid` and once the slave is its stdin: makes it
/// the session's controlling terminal (async-signal-safe: one ioctl).
pub fn in_take_as_controlling() -> io::Result<()> {
    // SAFETY: descriptor 0 is open for the whole call: std made it the
    // slave before the pre-exec hooks run.
    let stdin = unsafe { BorrowedFd::borrow_raw(0) };
    Ok(rustix::process::ioctl_tiocsctty(stdin)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pty_has_its_size_and_passes_bytes_both_ways() {
        let pty = Pty::open().unwrap();
        let size = rustix::termios::tcgetwinsize(&pty.slave).unwrap();
        assert_eq!((size.ws_col, size.ws_row), (COLUMNS, ROWS));
        rustix::io::write(&pty.master, b"hi\n").unwrap();
        let mut buf = [0u8; 16];
        let n = rustix::io::read(&pty.slave, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"hi\n");
    }
}
