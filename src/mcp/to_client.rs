//! What a message from the server to the client gets before it goes out,
//! on stdio and over HTTP alike: the one place a server request's shape is
//! fixed (docs/MCP.md, "Protocol").

use serde_json::{json, Value};

/// `roots/list` with `params: {}`, as a request of the session or asked in
/// an `input_required` result: rmcp sends none (and a `progressToken` in
/// `_meta`, which a question to the client has no use for), and the Go SDK
/// fails on a request without `params` ("unexpected end of JSON input").
/// Whether `value` was changed.
pub fn fix(value: &mut Value) -> bool {
    let mut changed = false;
    if value.get("method").and_then(Value::as_str) == Some("roots/list") {
        value["params"] = json!({});
        changed = true;
    }
    let asked = value.pointer_mut("/result/inputRequests").and_then(Value::as_object_mut);
    for question in asked.into_iter().flat_map(|asked| asked.values_mut()) {
        if question.get("method").and_then(Value::as_str) == Some("roots/list") {
            question["params"] = json!({});
            changed = true;
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_list_has_empty_params() {
        let mut request = json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {"_meta": {"progressToken": 0}}});
        assert!(fix(&mut request));
        assert_eq!(
            request,
            json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {}})
        );
    }

    #[test]
    fn other_messages_are_left_alone() {
        let mut answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "roots/list"}});
        assert!(!fix(&mut answer));
    }
}
