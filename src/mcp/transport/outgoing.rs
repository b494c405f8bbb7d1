//! A message from rmcp as the line to write: a response carries the id the
//! client wrote (or joins its batch's answer), the `initialize` response
//! tells the revision, and a server request goes out as `to_client` shapes it.

use std::io;

use rmcp::service::{RoleServer, TxJsonRpcMessage};
use serde_json::Value;

use super::ids::InFlight;
use crate::mcp::{tell, to_client};

/// The line to write for `item`; `None` when nothing goes out (the answer
/// to a cancelled request, or to a batch not complete yet).
pub fn line(
    in_flight: &mut InFlight,
    item: &TxJsonRpcMessage<RoleServer>,
) -> io::Result<Option<String>> {
    let mut value = serde_json::to_value(item).map_err(io::Error::other)?;
    to_client::fix(&mut value);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_id_goes_back_as_written() {
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(
            with_id(response, "1.50").unwrap(),
            r#"{"jsonrpc":"2.0","id":1.50,"result":{}}"#
        );
    }
}
