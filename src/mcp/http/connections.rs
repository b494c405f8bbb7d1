//! How many connections `mcp --listen` keeps open at once. Each costs a
//! descriptor, a task and hyper's buffers; past the bound a new one is
//! answered 503 at once and closed, and stderr says so, rather than let
//! any number of clients (or one client's many sockets) hold the server.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::mcp::tell;

pub struct Connections {
    open: Arc<Semaphore>,
    max: usize,
}

/// One open connection's place, given back when it closes.
pub struct Open {
    _place: OwnedSemaphorePermit,
}

impl Connections {
    pub fn new(max: usize) -> Connections {
        Connections { open: Arc::new(Semaphore::new(max.min(Semaphore::MAX_PERMITS))), max }
    }

    /// A place for a new connection, if one is free.
    pub fn admit(&self) -> Option<Open> {
        Arc::clone(&self.open).try_acquire_owned().ok().map(|place| Open { _place: place })
    }

    /// Answers `stream`, a connection past the bound, 503 and closes it,
    /// without waiting on it: the answer is small enough for a new
    /// socket's buffer, and a client that does not read it loses nothing
    /// it could have had.
    pub fn refuse(&self, stream: TcpStream, peer: SocketAddr) {
        let max = self.max;
        let text = format!(
            "Service Unavailable: {max} connections are open, the most this server takes; retry \
             once one closes"
        );
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n\
             Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        );
        let _ = stream.try_write(answer.as_bytes());
        drop(stream);
        tell(format_args!(
            "refused a connection from {peer}: {max} connections are open, the most (503)"
        ));
    }
}
