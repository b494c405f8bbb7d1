//! stdin and stdout for the transport. Pipes and sockets (what an MCP
//! client connects) are read and written on the runtime's own thread, made
//! non-blocking and polled; tokio's `stdin()` and `stdout()` hand every read
//! and write to a thread of its blocking pool, two hand-offs between threads
//! for each request (docs/PERFORMANCE.md, "MCP calls against the reference
//! server"). A terminal or a file, which cannot be polled or must not be
//! left non-blocking for the shell, goes through tokio's.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::FileType;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;
use tokio::net::UnixStream;

pub type Input = Box<dyn AsyncRead + Send + Unpin>;
pub type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// stdin, polled when it can be. Needs the runtime.
pub fn input() -> Input {
    match polled(&io::stdin()) {
        Some(Polled::Pipe(fd)) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        Some(Polled::Socket(fd)) => match socket(fd) {
            Ok(socket) => Box::new(socket),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        None => Box::new(tokio::io::stdin()),
    }
}

/// stdout, polled when it can be. Needs the runtime.
pub fn output() -> Output {
    match polled(&io::stdout()) {
        Some(Polled::Pipe(fd)) => match pipe::Sender::from_owned_fd(fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        Some(Polled::Socket(fd)) => match socket(fd) {
            Ok(socket) => Box::new(socket),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        None => Box::new(tokio::io::stdout()),
    }
}

enum Polled {
    Pipe(OwnedFd),
    Socket(OwnedFd),
}

/// A duplicate of `stdio`'s descriptor when it is a pipe or a socket.
fn polled(stdio: &impl AsFd) -> Option<Polled> {
    let kind = FileType::from_raw_mode(rustix::fs::fstat(stdio).ok()?.st_mode);
    let fd = stdio.as_fd().try_clone_to_owned().ok()?;
    match kind {
        FileType::Fifo => Some(Polled::Pipe(fd)),
        FileType::Socket => Some(Polled::Socket(fd)),
        _ => None,
    }
}

fn socket(fd: OwnedFd) -> io::Result<UnixStream> {
    let socket = std::os::unix::net::UnixStream::from(fd);
    socket.set_nonblocking(true)?;
    UnixStream::from_std(socket)
}
