//! MCP's stdio transport: one JSON-RPC message a line on stdin and stdout
//! (docs/MCP.md, "Protocol").
//!
//! rmcp has one (`transport::io::stdio`), but it drops a line that is not
//! JSON without a word, and keeps serving responses for up to five seconds
//! after stdin closes. JSON-RPC 2.0 answers such a line with a parse error
//! (-32700, `id` null), and MCP ends a stdio server by closing its stdin, so
//! this transport answers the line and tells the server the moment stdin
//! ends. It also keeps what rmcp does not: ids echoed byte for byte, one
//! request per id in flight, batches on the revision that has them, a
//! bounded line.
//!
//! - `lines`: stdin's lines, bounded;
//! - `incoming`: a line as messages for rmcp, or the transport's replies;
//! - `ids`: the requests in flight, their ids, batches, the revision;
//! - `outgoing`: a message from rmcp as its line;
//! - `writer`: the one task that writes stdout;
//! - `stdio`: stdin and stdout, polled on the runtime's thread when they
//!   are pipes or sockets.

mod ids;
mod incoming;
mod lines;
mod outgoing;
mod stdio;
mod writer;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

use super::tell;
use ids::InFlight;
use incoming::{error_line, INVALID_REQUEST};
use lines::{Lines, Next, LIMIT};
pub use writer::Writer;

pub struct StdioLines {
    lines: Lines,
    /// Messages read and not yet handed to rmcp (a batch holds several).
    pending: VecDeque<incoming::Message>,
    /// Shared by the reading and the sending side; never held across an await.
    in_flight: Arc<Mutex<InFlight>>,
    writer: Writer,
    /// Cancelled when stdin reaches its end (or fails).
    closed: CancellationToken,
}

impl StdioLines {
    /// The transport, and the token it cancels when stdin ends. Needs the
    /// runtime (it starts the writer task).
    pub fn new() -> (StdioLines, CancellationToken) {
        let closed = CancellationToken::new();
        let transport = StdioLines {
            lines: Lines::new(),
            pending: VecDeque::new(),
            in_flight: Arc::default(),
            writer: Writer::start(),
            closed: closed.clone(),
        };
        (transport, closed)
    }

    /// The writer, to wait for what is queued before the process ends.
    pub fn writer(&self) -> Writer {
        self.writer.clone()
    }
}

fn lock(in_flight: &Mutex<InFlight>) -> MutexGuard<'_, InFlight> {
    // A panic elsewhere cannot leave the table half-changed: every change
    // is a few map operations.
    in_flight.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Transport<RoleServer> for StdioLines {
    type Error = io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Done now, not in the future: only queued, never half-written.
        let line = outgoing::line(&mut lock(&self.in_flight), &item);
        let sent =
            line.and_then(|line| line.map_or(Ok(()), |line| self.writer.line(line.into_bytes())));
        std::future::ready(sent)
    }

    /// Cancel-safe, as rmcp needs (it drops this future whenever something
    /// else is ready): the one await is `Lines::next`, and what a line gives
    /// is handled before the next await.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Some(message);
            }
            let replies = match self.lines.next().await {
                Ok(Next::Line(line)) => {
                    let line = trim_line(&line);
                    if line.is_empty() {
                        continue;
                    }
                    incoming::read(&mut lock(&self.in_flight), line, &mut self.pending)
                }
                Ok(Next::TooLong) => {
                    tell(format_args!("skipped a line over {} MiB", LIMIT >> 20));
                    let message = format!(
                        "Invalid Request: a line over the limit of {} MiB, skipped",
                        LIMIT >> 20
                    );
                    vec![error_line("null", INVALID_REQUEST, &message).into_bytes()]
                }
                Ok(Next::End) => break,
                Err(e) => {
                    tell(format_args!("reading stdin: {e}"));
                    break;
                }
            };
            if replies.into_iter().any(|reply| self.writer.line(reply).is_err()) {
                break;
            }
        }
        self.closed.cancel();
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.flushed().await;
        Ok(())
    }
}

/// The line without its `\n`, a `\r` before it, or a UTF-8 byte order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_lose_their_ending_and_byte_order_mark() {
        assert_eq!(trim_line(b"{}\r\n"), b"{}");
        assert_eq!(trim_line("\u{feff}{}\n".as_bytes()), b"{}");
    }
}
