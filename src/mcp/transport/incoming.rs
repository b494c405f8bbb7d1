//! A line from the client: the messages it holds for rmcp (requests with
//! their ids mapped), and the replies the transport gives itself: a parse
//! error, an invalid message, an id already in flight, a batch where the
//! revision has none.

use std::collections::{HashMap, VecDeque};

use rmcp::service::{RoleServer, RxJsonRpcMessage};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::ids::InFlight;
use crate::mcp::tell;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
/// The one revision whose spec has JSON-RPC batches.
const BATCH_REVISION: &str = "2025-03-26";

pub type Message = RxJsonRpcMessage<RoleServer>;

/// Reads `line` (trimmed, not empty): messages for rmcp go to `messages`;
/// the replies to write are returned.
pub fn read(
    in_flight: &mut InFlight,
    line: &[u8],
    messages: &mut VecDeque<Message>,
) -> Vec<Vec<u8>> {
    if line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return batch(in_flight, line, messages).into_iter().map(String::into_bytes).collect();
    }
    let mut replies = Vec::new();
    one(in_flight, line, None, messages, &mut replies);
    replies.into_iter().map(|reply| reply.text().into_bytes()).collect()
}

/// A reply the transport gives.
enum Reply {
    /// To a message that is not a request rmcp sees.
    Own(String),
    /// To a request admitted, then found malformed: it answers it.
    Admitted(String),
    /// A whole batch's answer, completed by a cancellation: goes out as is.
    Batch(String),
}

impl Reply {
    fn text(self) -> String {
        match self {
            Reply::Own(text) | Reply::Admitted(text) | Reply::Batch(text) => text,
        }
    }
}

/// A JSON array of messages: one array of the answers on the revision that
/// has batches; one error anywhere else.
fn batch(in_flight: &mut InFlight, line: &[u8], messages: &mut VecDeque<Message>) -> Vec<String> {
    if in_flight.revision() != Some(BATCH_REVISION) {
        let when = match in_flight.revision() {
            Some(revision) => format!("in revision {revision}"),
            None => "before initialize".to_owned(),
        };
        let message = format!(
            "Invalid Request: batches are not supported {when} (only in revision {BATCH_REVISION})"
        );
        return vec![error_line("null", INVALID_REQUEST, &message)];
    }
    let items: Vec<&RawValue> = match serde_json::from_slice(line) {
        Ok(items) => items,
        Err(e) => return vec![error_line("null", PARSE_ERROR, &format!("Parse error: {e}"))],
    };
    if items.is_empty() {
        return vec![error_line("null", INVALID_REQUEST, "Invalid Request: an empty batch")];
    }
    let batch = in_flight.open_batch();
    let mut out = Vec::new();
    for item in items {
        let mut replies = Vec::new();
        one(in_flight, item.get().as_bytes(), Some(batch), messages, &mut replies);
        for reply in replies {
            match reply {
                Reply::Own(text) => out.extend(in_flight.batch_answer(batch, text, false)),
                Reply::Admitted(text) => out.extend(in_flight.batch_answer(batch, text, true)),
                Reply::Batch(text) => out.push(text),
            }
        }
    }
    out.extend(in_flight.close_batch(batch));
    out
}

/// One message; the transport's replies go to `replies`.
fn one(
    in_flight: &mut InFlight,
    text: &[u8],
    batch: Option<u64>,
    messages: &mut VecDeque<Message>,
    replies: &mut Vec<Reply>,
) {
    let mut value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(e) => {
            tell(format_args!("not a message ({e}): {}", preview(text)));
            replies.push(Reply::Own(error_line("null", PARSE_ERROR, &format!("Parse error: {e}"))));
            return;
        }
    };
    let method = value.get("method").and_then(Value::as_str).map(str::to_owned);
    let raw = raw_id(text, &value);
    if let (Some(method), Some(raw)) = (&method, &raw) {
        let Some(internal) = in_flight.admit(raw, batch, method == "initialize") else {
            let message =
                format!("Invalid Request: id {raw} is already in use by a request in flight");
            replies.push(Reply::Own(error_line(raw, INVALID_REQUEST, &message)));
            return;
        };
        value["id"] = internal.into();
        match serde_json::from_value(value) {
            Ok(message) => messages.push_back(message),
            Err(e) => {
                in_flight.answered(internal);
                tell(format_args!("not a message ({e}): {}", preview(text)));
                replies.push(Reply::Admitted(invalid(raw)));
            }
        }
        return;
    }
    if method.as_deref() == Some("notifications/cancelled") {
        // The request is named by its id as the client wrote it.
        let cancelled =
            raw_field(text, "params").and_then(|p| raw_field(p.get().as_bytes(), "requestId"));
        if let Some((internal, complete)) = cancelled.and_then(|id| in_flight.cancelled(id.get())) {
            value["params"]["requestId"] = internal.into();
            if let Some(complete) = complete {
                replies.push(Reply::Batch(complete));
            }
        }
    }
    match serde_json::from_value(value.clone()) {
        Ok(message) => messages.push_back(message),
        Err(e) => {
            tell(format_args!("not a message ({e}): {}", preview(text)));
            // A notification (a method, no id) gets no reply, even a bad one.
            if value.get("id").is_some() || method.is_none() {
                let id = value.get("id").filter(|id| id.is_string() || id.is_number());
                replies.push(Reply::Own(invalid(&id.map_or("null".to_owned(), Value::to_string))));
            }
        }
    }
}

/// The id of a request (a method, and an id that is a string or a number),
/// as the client wrote it.
fn raw_id(text: &[u8], value: &Value) -> Option<String> {
    value.get("method")?;
    let id = value.get("id").filter(|id| id.is_string() || id.is_number())?;
    Some(raw_field(text, "id").map_or_else(|| id.to_string(), |raw| raw.get().to_owned()))
}

/// A member of a JSON object, unparsed.
fn raw_field<'a>(text: &'a [u8], name: &str) -> Option<&'a RawValue> {
    let mut object: HashMap<String, &RawValue> = serde_json::from_slice(text).ok()?;
    object.remove(name)
}

fn invalid(raw: &str) -> String {
    error_line(raw, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
}

/// An error response with `raw` (JSON text) as its id.
pub fn error_line(raw: &str, code: i64, message: &str) -> String {
    let error = json!({"code": code, "message": message});
    format!(r#"{{"jsonrpc":"2.0","id":{raw},"error":{error}}}"#)
}

/// The start of a rejected line, for the log.
pub fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(200)]);
    text.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replies(line: &[u8]) -> Vec<Value> {
        let mut messages = VecDeque::new();
        let replies = read(&mut InFlight::default(), line, &mut messages);
        replies.iter().map(|r| serde_json::from_slice(r).unwrap()).collect()
    }

    #[test]
    fn garbage_is_a_parse_error_with_a_null_id() {
        let answer = &replies(b"{not json")[0];
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn a_request_of_the_wrong_shape_is_invalid_with_its_id() {
        let answer = &replies(br#"{"id":7,"x":1}"#)[0];
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        assert!(replies(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":3}"#)
            .is_empty());
    }

    #[test]
    fn a_request_id_reaches_rmcp_as_an_internal_integer() {
        let mut in_flight = InFlight::default();
        let mut messages = VecDeque::new();
        let line = br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#;
        assert!(read(&mut in_flight, line, &mut messages).is_empty());
        let sent = serde_json::to_value(&messages[0]).unwrap();
        assert_eq!(sent["id"], 1);
        assert_eq!(
            in_flight.answered(1).map(|r| r.raw).as_deref(),
            Some("123456789012345678901234567890")
        );
    }
}
