//! MCP's stdio transport: one JSON-RPC message a line on stdin and stdout.
//!
//! rmcp has one (`transport::io::stdio`), but it drops a line that is not
//! JSON without a word, and keeps serving responses for up to five seconds
//! after stdin closes. JSON-RPC 2.0 answers such a line with a parse error
//! (-32700, `id` null), and MCP ends a stdio server by closing its stdin, so
//! this transport answers the line and tells the server the moment stdin
//! ends.

use std::borrow::Cow;
use std::io;
use std::sync::Arc;

use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{json, Value};
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::FileType;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::net::UnixStream;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::tell;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// stdin, read on the runtime's thread when it can be (see [`stdio`]).
type Input = Box<dyn AsyncRead + Send + Unpin>;
/// stdout, likewise.
type Output = Box<dyn AsyncWrite + Send + Unpin>;

pub struct StdioLines {
    input: BufReader<Input>,
    line: Vec<u8>,
    output: Arc<Mutex<Output>>,
    /// Cancelled when stdin reaches its end (or fails).
    closed: CancellationToken,
}

impl StdioLines {
    /// The transport, and the token it cancels when stdin ends.
    pub fn new() -> (StdioLines, CancellationToken) {
        let closed = CancellationToken::new();
        let (input, output) = stdio();
        let transport = StdioLines {
            input: BufReader::new(input),
            line: Vec::new(),
            output: Arc::new(Mutex::new(output)),
            closed: closed.clone(),
        };
        (transport, closed)
    }
}

/// stdin and stdout. Pipes and sockets (what an MCP client connects) are
/// read and written on the runtime's own thread, made non-blocking and
/// polled; tokio's `stdin()` and `stdout()` hand every read and write to a
/// thread of its blocking pool, two hand-offs between threads for each
/// request (docs/PERFORMANCE.md, "MCP calls against the reference
/// server"). A terminal or a file, which cannot be polled or must not be
/// left non-blocking for the shell, goes through tokio's.
fn stdio() -> (Input, Output) {
    let input: Input = match polled(&std::io::stdin()) {
        Some(Polled::Pipe(fd)) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        Some(Polled::Socket(fd)) => match socket(fd) {
            Ok(socket) => Box::new(socket),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        None => Box::new(tokio::io::stdin()),
    };
    let output: Output = match polled(&std::io::stdout()) {
        Some(Polled::Pipe(fd)) => match pipe::Sender::from_owned_fd(fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        Some(Polled::Socket(fd)) => match socket(fd) {
            Ok(socket) => Box::new(socket),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        None => Box::new(tokio::io::stdout()),
    };
    (input, output)
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

/// Writes one message as one line. The lock keeps concurrent answers from
/// interleaving.
async fn write_line(output: &Mutex<Output>, mut line: Vec<u8>) -> io::Result<()> {
    line.push(b'\n');
    let mut out = output.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

/// An error response with `id` (JSON null when unknown), as a line's bytes.
fn error_line(id: Value, code: i64, message: String) -> Vec<u8> {
    let response = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    response.to_string().into_bytes()
}

/// What to do with a line that is not a message rmcp understands: the
/// error to answer, or `None` for a notification, which gets no answer.
fn reject(line: &[u8]) -> Option<Vec<u8>> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return Some(error_line(Value::Null, PARSE_ERROR, format!("Parse error: {e}"))),
    };
    let id = value.get("id").cloned();
    if id.is_none() && value.get("method").is_some() {
        // An unknown or malformed notification: JSON-RPC forbids a reply.
        return None;
    }
    let id = id.filter(|id| id.is_string() || id.is_number()).unwrap_or(Value::Null);
    Some(error_line(id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message".to_owned()))
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
        let output = Arc::clone(&self.output);
        async move {
            let line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            write_line(&output, line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // `line` is cleared only once a whole line is handled: rmcp may
            // drop this future between two reads (read_until is cancel-safe
            // only if what it appended is kept).
            match self.input.read_until(b'\n', &mut self.line).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tell(format_args!("reading stdin: {e}"));
                    break;
                }
            }
            let line = trim_line(&self.line);
            if line.is_empty() {
                self.line.clear();
                continue;
            }
            let parsed = serde_json::from_slice(line);
            let answer = match &parsed {
                Ok(_) => None,
                Err(e) => {
                    tell(format_args!("not a message ({e}): {}", preview(line)));
                    reject(line)
                }
            };
            self.line.clear();
            if let Ok(message) = parsed {
                return Some(message);
            }
            if let Some(answer) = answer {
                if let Err(e) = write_line(&self.output, answer).await {
                    tell(format_args!("writing stdout: {e}"));
                    break;
                }
            }
        }
        self.closed.cancel();
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.flush().await
    }
}

/// The line without its `\n`, a `\r` before it, or a UTF-8 byte order mark.
fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
}

/// The start of a rejected line, for the log.
fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(200)]);
    text.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_a_parse_error_with_a_null_id() {
        let answer: Value = serde_json::from_slice(&reject(b"{not json").unwrap()).unwrap();
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn a_request_of_the_wrong_shape_is_invalid_with_its_id() {
        let answer: Value = serde_json::from_slice(&reject(br#"{"id":7,"x":1}"#).unwrap()).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        assert!(
            reject(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":3}"#).is_none()
        );
    }

    #[test]
    fn lines_lose_their_ending_and_byte_order_mark() {
        assert_eq!(trim_line(b"{}\r\n"), b"{}");
        assert_eq!(trim_line("\u{feff}{}\n".as_bytes()), b"{}");
    }
}
