//! The text content of a `tools/call` result: what a model should read.
//! The tool's `output` as it is (not a JSON-escaped string), then each other
//! field on a line of its own (`exit_code: 0`); an error envelope reads
//! `CODE: message`, then its other fields alike (full profile), at most
//! [`ERROR_TEXT_MAX`] bytes of it.

use serde_json::{Map, Value};

use crate::limit::{Bounded, ANSWER_RESERVE};

/// The most bytes of an error's text, its head and tail kept around the
/// output limit's marker: Claude Code cuts an error result's text past about
/// 11,000 characters, and gives the model no `structuredContent` with it
/// (docs/MCP.md, "Answers sized for the hosts").
pub const ERROR_TEXT_MAX: usize = 10_000;

/// The answer of a tool, as the model reads it, and whether it is an error.
pub fn render(answer: &Map<String, Value>) -> (String, bool) {
    if let (Some(message), Some(code)) = (answer.get("error"), answer.get("error_code")) {
        // Then the fields a full-profile error adds (file_edit's hints).
        let mut text = format!("{}: {}", plain(code), plain(message));
        for (key, value) in answer.iter().filter(|(k, _)| *k != "error" && *k != "error_code") {
            text.push_str(&format!("\n{key}: {value}"));
        }
        return (short(text), true);
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

/// `text` within [`ERROR_TEXT_MAX`] bytes, marker included.
fn short(text: String) -> String {
    if text.len() <= ERROR_TEXT_MAX {
        return text;
    }
    // The marker line comes on top of what is kept; the reserve holds it.
    let mut kept = Bounded::new(Some(ERROR_TEXT_MAX - ANSWER_RESERVE));
    kept.push(text.as_bytes());
    String::from_utf8_lossy(&kept.finish()).into_owned()
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

    #[test]
    fn a_long_error_text_keeps_head_code_and_tail_within_the_bound() {
        let message = format!("File not found: {}", "é/".repeat(20_000) + "end");
        let answer = object(json!({"error": message, "error_code": "FILE_NOT_FOUND"}));
        let (text, is_error) = render(&answer);
        assert!(is_error);
        assert!(text.len() <= ERROR_TEXT_MAX, "{}", text.len());
        assert!(text.starts_with("FILE_NOT_FOUND: File not found: é/é/"), "{text}");
        assert!(text.ends_with("é/é/end"), "{text}");
        let omitted = message.len() + "FILE_NOT_FOUND: ".len() - text.len();
        assert!(text.contains("bytes omitted ...]"), "{text}");
        assert!(omitted > 30_000, "{omitted}");
    }
}
