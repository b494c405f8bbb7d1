//! An SSE answer's events as clients read them: each names its type,
//! `event: message`, which some clients wait for (chuk mcp-cli never sees
//! an event without it), and a server request in one is shaped as on stdio
//! (`to_client`). rmcp writes each event as one frame, `data: JSON` first,
//! and a keep-alive as a comment (docs/MCP.md, "Over HTTP").

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::CONTENT_TYPE;
use hyper::Response;

use super::BoxBody;
use crate::mcp::to_client;

/// The answer, its events as they go out if it is an SSE stream.
pub fn events(response: Response<BoxBody>) -> Response<BoxBody> {
    let stream = response.headers().get(CONTENT_TYPE).map(|v| v.as_bytes());
    if !stream.is_some_and(|v| v.starts_with(b"text/event-stream")) {
        return response;
    }
    response.map(|body| body.map_frame(|frame| frame.map_data(event)).boxed())
}

/// The frame of one event, as it goes out.
pub fn event(frame: Bytes) -> Bytes {
    let Some(rest) = frame.strip_prefix(b"data:") else {
        // A comment (keep-alive) or an event that already names its type.
        return frame;
    };
    let mut out = Vec::with_capacity(frame.len() + EVENT.len() + 16);
    out.extend_from_slice(EVENT);
    match reshaped(rest) {
        Some(data) => {
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(&data);
            // What follows the data line (`id:`, the blank line) stays.
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            out.extend_from_slice(&rest[end..]);
        }
        None => out.extend_from_slice(&frame),
    }
    Bytes::from(out)
}

/// The line naming an event's type.
const EVENT: &[u8] = b"event: message\n";

/// The data of a `roots/list` request (or a question for one) reshaped by
/// `to_client`; `None` for any other message, left byte for byte.
fn reshaped(rest: &[u8]) -> Option<Vec<u8>> {
    const METHOD: &[u8] = b"roots/list";
    let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let data = &rest[..end];
    if !data.windows(METHOD.len()).any(|w| w == METHOD) {
        return None;
    }
    let mut value: serde_json::Value = serde_json::from_slice(data).ok()?;
    to_client::fix(&mut value).then(|| serde_json::to_vec(&value).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_names_its_type() {
        let frame =
            Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 0\n\n");
        assert_eq!(
            &event(frame)[..],
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 0\n\n"
        );
        assert_eq!(&event(Bytes::from_static(b":\n\n"))[..], b":\n\n");
    }

    #[test]
    fn roots_list_goes_out_with_empty_params() {
        let frame = Bytes::from_static(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\",\"params\":{\"_meta\":{\"progressToken\":0}}}\n\n",
        );
        let out = event(frame);
        let text = std::str::from_utf8(&out).unwrap_or_default();
        assert!(text.starts_with("event: message\ndata: {"), "{text}");
        assert!(text.contains("\"params\":{}"), "{text}");
        assert!(text.ends_with("}\n\n"), "{text}");
    }
}
