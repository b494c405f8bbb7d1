//! One line per HTTP request on stderr, written when its answer has been
//! sent (or dropped): `time peer METHOD path session status bytes duration
//! json-rpc-methods`. Never a header's value but the session id's start:
//! the token is never written.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Frame, SizeHint};

use crate::mcp::tell;

/// What the line says about a request, known before its answer.
pub struct Entry {
    pub peer: SocketAddr,
    pub method: String,
    pub path: String,
    /// The first 8 characters of `Mcp-Session-Id` (sent or assigned), `-`.
    pub session: String,
    /// The JSON-RPC method(s) of a POST, comma-separated, `-` if none.
    pub rpc: String,
    pub started: Instant,
    pub status: u16,
}

impl Entry {
    pub fn new(peer: SocketAddr, method: &str, path: &str) -> Entry {
        Entry {
            peer,
            method: method.to_owned(),
            path: path.chars().take(200).collect(),
            session: "-".to_owned(),
            rpc: "-".to_owned(),
            started: Instant::now(),
            status: 0,
        }
    }

    /// The session id as the log shows it.
    pub fn set_session(&mut self, id: &[u8]) {
        let id = String::from_utf8_lossy(id);
        self.session = id.chars().filter(|c| c.is_ascii_graphic()).take(8).collect();
    }

    fn write(&self, bytes: u64) {
        tell(format_args!(
            "{} {} {} {} session={} {} {}B {}ms {}",
            httpdate::fmt_http_date(SystemTime::now()),
            self.peer,
            self.method,
            self.path.escape_debug(),
            self.session,
            self.status,
            bytes,
            self.started.elapsed().as_millis(),
            self.rpc,
        ));
    }
}

/// An answer's body that counts what it sends and writes the entry's line
/// when it ends or is dropped (a client gone mid-stream).
pub struct Logged {
    inner: BoxBody<Bytes, Infallible>,
    bytes: u64,
    entry: Option<Entry>,
}

impl Logged {
    pub fn new(inner: BoxBody<Bytes, Infallible>, entry: Entry) -> Logged {
        Logged { inner, bytes: 0, entry: Some(entry) }
    }

    fn finish(&mut self) {
        if let Some(entry) = self.entry.take() {
            entry.write(self.bytes);
        }
    }
}

impl Body for Logged {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.bytes += data.len() as u64;
                }
            }
            Poll::Ready(None) => self.finish(),
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The JSON-RPC methods of a POST body (a message or a batch), for the log.
pub fn rpc_methods(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Messages {
        One(Message),
        Many(Vec<Message>),
    }
    let methods = match serde_json::from_slice::<Messages>(body) {
        Ok(Messages::One(one)) => vec![one],
        Ok(Messages::Many(many)) => many,
        Err(_) => return "-".to_owned(),
    };
    let names: Vec<String> = methods
        .into_iter()
        .map(|m| m.method.map_or("response".to_owned(), |name| name.escape_debug().to_string()))
        .take(10)
        .collect();
    if names.is_empty() {
        "-".to_owned()
    } else {
        names.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_methods_of_a_message_and_of_a_batch() {
        assert_eq!(rpc_methods(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#), "tools/call");
        assert_eq!(
            rpc_methods(br#"[{"method":"ping","id":1},{"id":2,"result":{}}]"#),
            "ping,response"
        );
        assert_eq!(rpc_methods(b"not json"), "-");
    }
}
