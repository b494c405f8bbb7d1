//! The text content of a `tools/call` result: what a model should read.
//! The tool's `output` as it is (not a JSON-escaped string), then each other
//! field on a line of its own (`exit_code: 0`); an error envelope reads
//! `CODE: message`, then its other fields alike (full profile).

use serde_json::{Map, Value};

/// The answer of a tool, as the model reads it, and whether it is an error.
pub fn render(answer: &Map<String, Value>) -> (String, bool) {
    if let (Some(message), Some(code)) = (answer.get("error"), answer.get("error_code")) {
        // Then the fields a full-profile error adds (file_edit's hints).
        let mut text = format!("{}: {}", plain(code), plain(message));
        for (key, value) in answer.iter().filter(|(k, _)| *k != "error" && *k != "error_code") {
            text.push_str(&format!("\n{key}: {value}"));
        }
        return (text, true);
    }
    let mut text = String::new();
    if let Some(output) = answer.get("output") {
        text.push_str(&plain(output));
    }
    for (key, value) in answer.iter().filter(|(key, _)| *key != "output") {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(key);
        text.push_str(": ");
        text.push_str(&plain(value));
    }
    (text, false)
}

/// A string as its characters, anything else as JSON.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn output_comes_unescaped_then_the_other_fields() {
        let answer = object(json!({"output": "a \"b\"\nc\td", "exit_code": 0}));
        assert_eq!(render(&answer), ("a \"b\"\nc\td\nexit_code: 0".to_owned(), false));
    }

    #[test]
    fn an_empty_output_leaves_only_the_fields() {
        assert_eq!(render(&object(json!({"output": "", "exit_code": 1}))).0, "exit_code: 1");
        assert_eq!(render(&object(json!({"output": "x"}))).0, "x");
    }

    #[test]
    fn an_error_envelope_is_code_colon_message() {
        let answer = object(json!({"error": "File not found: a", "error_code": "FILE_NOT_FOUND"}));
        assert_eq!(render(&answer), ("FILE_NOT_FOUND: File not found: a".to_owned(), true));
        let hinted = object(json!({
            "error": "String not found in file",
            "error_code": "NOT_FOUND",
            "closest": {"line": 2, "text": "let x"}
        }));
        assert_eq!(
            render(&hinted).0,
            "NOT_FOUND: String not found in file\nclosest: {\"line\":2,\"text\":\"let x\"}"
        );
    }
}
