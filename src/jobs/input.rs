//! A job's input (docs/TOOLS.md, "Talking to a job"): `job_write` hands
//! bytes to the job's supervisor through the job's `input` FIFO, and the
//! supervisor's forwarder writes them to the command's stdin (a pipe, or
//! the pseudo-terminal of a `tty` job). The job outlives every call, so
//! only its supervisor can hold the command's stdin.
//!
//! Why a FIFO in the job's directory: it is reached only through the
//! caller's namespace (another agent's job is `JOB_NOT_FOUND`), it is mode
//! 0600 in a directory only the user may enter, and opening it is an open,
//! which Landlock refuses to a confined command (the state directory is
//! never where one may write; a Unix socket's connect is not an open).
//!
//! On the FIFO, frames of at most `PIPE_BUF` bytes, each written whole or
//! not at all (the kernel's guarantee for a pipe write of at most that
//! size): a kind byte, a length (2 bytes, little-endian), the data. A
//! writer whose frame does not fit waits, at most its bound: a command
//! that is not reading fills its stdin, then the FIFO, and the call
//! answers how much was taken.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags};
use rustix::fs::FlockOperation;

use super::store::Job;
use crate::process::pipes;

/// The largest write a pipe takes whole or not at all.
const FRAME: usize = libc::PIPE_BUF;
const HEADER: usize = 3;
const DATA: u8 = b'd';
const CLOSE: u8 = b'c';

/// The terminal's end-of-file character (Ctrl-D, `VEOF`): what closing a
/// `tty` job's input types, since closing the terminal would hang it up.
const END_OF_FILE: u8 = 0x04;

/// What `job_write` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Bytes the job took.
    pub taken: usize,
    /// Whether the close (`close_stdin`) was taken too.
    pub closed: bool,
}

/// Why a job takes no input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoInput {
    /// Started without an input (a foreground command that yielded).
    NotReading,
    /// Its stdin was closed by `close_stdin`.
    Closed,
    /// Its supervisor no longer reads (the job has ended).
    Gone,
}

/// Writes `input` to `job`'s input, then closes it when `close`, within
/// `bound`: what does not fit by then is not taken.
pub fn write(job: &Job, input: &[u8], close: bool, bound: Duration) -> Result<Written, NoInput> {
    let deadline = Instant::now() + bound;
    let mut fifo = open_for_writing(job, deadline)?;
    // One writer at a time: frames of two calls never interleave.
    while rustix::fs::flock(&fifo, FlockOperation::NonBlockingLockExclusive).is_err() {
        if Instant::now() >= deadline {
            return Ok(Written { taken: 0, closed: false });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut taken = 0;
    for chunk in input.chunks(FRAME - HEADER) {
        if !send(&mut fifo, DATA, chunk, deadline) {
            return Ok(Written { taken, closed: false });
        }
        taken += chunk.len();
    }
    let closed = close && send(&mut fifo, CLOSE, &[], deadline);
    Ok(Written { taken, closed })
}

/// The FIFO, opened to write; its supervisor may not have opened it yet
/// just after the start.
fn open_for_writing(job: &Job, deadline: Instant) -> Result<File, NoInput> {
    loop {
        match job.open_input(false) {
            // A FIFO, or nothing reads it: what else someone put there is
            // never written to.
            Ok(fifo) => {
                let is_fifo = rustix::fs::fstat(&fifo)
                    .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_fifo());
                return if is_fifo { Ok(fifo) } else { Err(NoInput::NotReading) };
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(if job.input_closed() { NoInput::Closed } else { NoInput::NotReading })
            }
            Err(_) if job.ended().is_none() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => return Err(NoInput::Gone),
        }
    }
}

/// Writes one frame whole, waiting for room until `deadline`; whether it
/// was taken.
fn send(fifo: &mut File, kind: u8, data: &[u8], deadline: Instant) -> bool {
    let mut frame = Vec::with_capacity(HEADER + data.len());
    frame.push(kind);
    frame.extend_from_slice(&(data.len() as u16).to_le_bytes());
    frame.extend_from_slice(data);
    loop {
        match fifo.write(&frame) {
            Ok(n) => return n == frame.len(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return false;
                }
                let mut fds = [PollFd::new(fifo.as_fd(), PollFlags::POLLOUT)];
                pipes::wait(&mut fds, left);
            }
            // EPIPE: nobody reads it any more (the job ended).
            Err(_) => return false,
        }
    }
}

/// In the supervisor: forwards what `job_write` sends to the command's
/// `stdin`, on a thread of its own (a command that does not read blocks
/// only it), until the input is closed or the supervisor exits.
pub fn forward(job: &Job, stdin: OwnedFd, tty: bool) -> io::Result<()> {
    let fifo = job.open_input(true)?;
    let job = job.try_clone()?;
    std::thread::Builder::new()
        .name("input".to_owned())
        .spawn(move || forward_frames(&job, fifo, File::from(stdin), tty))?;
    Ok(())
}

fn forward_frames(job: &Job, mut fifo: File, stdin: File, tty: bool) {
    let mut stdin = Some(stdin);
    let mut pending = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match fifo.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
        let mut used = 0;
        while let Some((kind, data)) = frame_at(&pending[used..]) {
            used += HEADER + data.len();
            let to = stdin.as_mut();
            // A command that stopped reading for good (EPIPE, EIO): what
            // follows is dropped.
            let failed = match (kind, to) {
                (DATA, Some(to)) => to.write_all(data).is_err(),
                (CLOSE, Some(to)) if tty => to.write_all(&[END_OF_FILE]).is_err(),
                (CLOSE, Some(_)) => {
                    // The end of file the command reads.
                    drop(stdin.take());
                    job.mark_input_closed();
                    return;
                }
                _ => false,
            };
            if failed {
                stdin = None;
            }
        }
        pending.drain(..used);
    }
}

/// The frame at the start of `bytes`, once it is all there.
fn frame_at(bytes: &[u8]) -> Option<(u8, &[u8])> {
    let (&kind, rest) = bytes.split_first()?;
    let len = u16::from_le_bytes([*rest.first()?, *rest.get(1)?]) as usize;
    Some((kind, rest.get(2..2 + len)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_read_only_once_whole() {
        let bytes = [DATA, 3, 0, b'a', b'b', b'c', CLOSE, 0, 0];
        assert_eq!(frame_at(&bytes), Some((DATA, &b"abc"[..])));
        assert_eq!(frame_at(&bytes[..5]), None);
        assert_eq!(frame_at(&bytes[6..]), Some((CLOSE, &b""[..])));
        assert_eq!(frame_at(&bytes[..1]), None);
    }
}
