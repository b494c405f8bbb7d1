//! A message from rmcp as the line to write: a response carries the id the
//! client wrote (or joins its batch's answer), the `initialize` response
//! tells the revision, and `roots/list` goes out with `params: {}`.

use std::io;

use rmcp::service::{RoleServer, TxJsonRpcMessage};
use serde_json::{json, Value};

use super::ids::InFlight;
use crate::mcp::tell;

/// The line to write for `item`; `None` when nothing goes out (the answer
/// to a cancelled request, or to a batch not complete yet).
pub fn line(
    in_flight: &mut InFlight,
    item: &TxJsonRpcMessage<RoleServer>,
) -> io::Result<Option<String>> {
    let mut value = serde_json::to_value(item).map_err(io::Error::other)?;
    roots_list_params(&mut value);
    let Some(internal) = response_id(&value) else {
        return serde_json::to_string(&value).map(Some).map_err(io::Error::other);
    };
    let Some(request) = in_flight.answered(internal) else {
        tell(format_args!("dropped the answer to request {internal}: cancelled"));
        return Ok(None);
    };
    if request.is_initialize() {
        if let Some(revision) = value.pointer("/result/protocolVersion").and_then(Value::as_str) {
            in_flight.set_revision(revision);
        }
    }
    let text = with_id(value, &request.raw)?;
    Ok(match request.batch {
        Some(batch) => in_flight.batch_answer(batch, text, true),
        None => Some(text),
    })
}

/// The internal id of a response (or error response).
fn response_id(value: &Value) -> Option<i64> {
    if value.get("method").is_some() {
        return None;
    }
    value.get("result").or(value.get("error"))?;
    value.get("id")?.as_i64()
}

/// The response with `raw` (JSON text, as the client wrote it) as its id.
fn with_id(value: Value, raw: &str) -> io::Result<String> {
    let Value::Object(mut members) = value else {
        return Err(io::Error::other("a response that is not an object"));
    };
    members.remove("jsonrpc");
    members.remove("id");
    let rest = Value::Object(members).to_string();
    // `rest` is `{…}`: the id goes in after its `{`.
    let rest = rest.strip_prefix('{').unwrap_or(&rest);
    let comma = if rest == "}" { "" } else { "," };
    Ok(format!(r#"{{"jsonrpc":"2.0","id":{raw}{comma}{rest}"#))
}

/// `roots/list` with `params: {}`, as a request of the session or asked in
/// an `input_required` result: rmcp sends none (and a `progressToken` in
/// `_meta`, which a question to the client has no use for), and the Go SDK
/// fails on a request without `params` ("unexpected end of JSON input").
fn roots_list_params(value: &mut Value) {
    if value.get("method").and_then(Value::as_str) == Some("roots/list") {
        value["params"] = json!({});
    }
    let asked = value.pointer_mut("/result/inputRequests").and_then(Value::as_object_mut);
    for question in asked.into_iter().flat_map(|asked| asked.values_mut()) {
        if question.get("method").and_then(Value::as_str) == Some("roots/list") {
            question["params"] = json!({});
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_goes_back_as_written() {
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(
            with_id(response, "1.50").unwrap(),
            r#"{"jsonrpc":"2.0","id":1.50,"result":{}}"#
        );
    }

    #[test]
    fn roots_list_has_empty_params() {
        let mut request = json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {"_meta": {"progressToken": 0}}});
        roots_list_params(&mut request);
        assert_eq!(
            request,
            json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {}})
        );
    }
}
