//! One line per HTTP request on stderr, written when its answer has been
//! sent (or dropped): `time peer METHOD path session status bytes duration
//! json-rpc-methods`. Never a header's value but the session id's start:
//! the token is never written. What is copied from the request is bounded
//! (the method, the path, each JSON-RPC method and how many are named), so
//! that a line is at most a few hundred bytes whatever the request; a cut
//! is marked `…`, and a batch's further methods are counted, `+N`.

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
            method: clipped(method, MAX_METHOD),
            path: clipped(path, MAX_PATH),
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
            self.path,
            self.session,
            self.status,
            bytes,
            self.started.elapsed().as_millis(),
            self.rpc,
        ));
    }
}

/// An answer's body that counts what it sends and writes the entry's line
/// when it ends or is dropped (a client gone mid-stream). What the request
/// holds until then (its body's bytes of the budget, its session's
/// activity) is let go at the same moment.
pub struct Logged {
    inner: BoxBody<Bytes, Infallible>,
    bytes: u64,
    entry: Option<Entry>,
    held: Option<Box<dyn Send>>,
}

impl Logged {
    pub fn new(inner: BoxBody<Bytes, Infallible>, entry: Entry, held: Box<dyn Send>) -> Logged {
        Logged { inner, bytes: 0, entry: Some(entry), held: Some(held) }
    }

    fn finish(&mut self) {
        if let Some(entry) = self.entry.take() {
            entry.write(self.bytes);
        }
        self.held = None;
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

/// The most bytes of the HTTP method the line copies (known ones are 7).
const MAX_METHOD: usize = 16;
/// The most bytes of the path (the endpoint is 4).
const MAX_PATH: usize = 100;
/// The most bytes of each JSON-RPC method (the longest MCP's is 35).
const MAX_RPC_METHOD: usize = 48;
/// The most JSON-RPC methods of a batch named; the rest are counted.
const MAX_RPC_METHODS: usize = 4;

/// `text` as one word of the line: what is not printable ASCII (a space,
/// a control character, the rest of Unicode) escaped, and at most `max`
/// bytes, a cut marked with `…`.
fn clipped(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let start = out.len();
        if c.is_ascii_graphic() {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
        if out.len() > max {
            out.truncate(start);
            out.push('…');
            break;
        }
    }
    out
}

/// The JSON-RPC methods of a POST body (a message or a batch), for the
/// log: the first few, each bounded, then how many more (`+N`).
pub fn rpc_methods(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Message<'a> {
        /// Borrowed, not copied: a method of megabytes costs nothing here.
        #[serde(borrow)]
        method: Option<&'a serde_json::value::RawValue>,
    }
    let batch = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    let parsed = match batch {
        true => serde_json::from_slice::<Vec<Message>>(body),
        false => serde_json::from_slice::<Message>(body).map(|one| vec![one]),
    };
    let Ok(methods) = parsed else { return "-".to_owned() };
    let mut names: Vec<String> = methods
        .iter()
        .take(MAX_RPC_METHODS)
        .map(|m| match m.method {
            None => "response".to_owned(),
            Some(raw) => match serde_json::from_str::<std::borrow::Cow<str>>(raw.get()) {
                Ok(name) => clipped(&name, MAX_RPC_METHOD),
                Err(_) => "?".to_owned(),
            },
        })
        .collect();
    if methods.len() > MAX_RPC_METHODS {
        names.push(format!("+{}", methods.len() - MAX_RPC_METHODS));
    }
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

    #[test]
    fn what_the_line_copies_is_bounded_and_a_cut_is_marked() {
        let long = format!(r#"{{"method":"{}\u0001"}}"#, "m".repeat(100));
        assert_eq!(rpc_methods(long.as_bytes()), format!("{}…", "m".repeat(48)));
        let batch = format!("[{}]", [r#"{"method":"ping"}"#; 10].join(","));
        assert_eq!(rpc_methods(batch.as_bytes()), "ping,ping,ping,ping,+6");
        assert_eq!(clipped("a b\u{1}é", 100), "a\\u{20}b\\u{1}\\u{e9}");
        assert_eq!(clipped(&"\u{1}".repeat(10), 16), "\\u{1}\\u{1}\\u{1}…");
    }
}
