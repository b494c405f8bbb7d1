//! Writing JSON strings straight from bytes. Tool output is whatever a
//! command printed or a file held: bytes that are not UTF-8 become U+FFFD and
//! control bytes (NUL included) are escaped, so every answer is valid JSON
//! and nothing is cut off at a NUL. One pass, no intermediate `String`.

use std::io::{self, Write};

const REPLACEMENT: &str = "\u{FFFD}";

/// Whether a byte of valid UTF-8 must be escaped: a control byte, `"` or `\`.
/// Bytes of multi-byte characters are all >= 0x80 and pass through.
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Writes `bytes` as one JSON string literal, quotes included.
pub fn write_str<W: Write + ?Sized>(w: &mut W, bytes: &[u8]) -> io::Result<()> {
    w.write_all(b"\"")?;
    for chunk in bytes.utf8_chunks() {
        write_valid(w, chunk.valid().as_bytes())?;
        if !chunk.invalid().is_empty() {
            w.write_all(REPLACEMENT.as_bytes())?;
        }
    }
    w.write_all(b"\"")
}

/// Escapes valid UTF-8: ASCII runs and multi-byte characters pass through
/// as they are; only `"`, `\` and control bytes are rewritten.
fn write_valid<W: Write + ?Sized>(w: &mut W, s: &[u8]) -> io::Result<()> {
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if !needs_escape(b) {
            i += 1;
            continue;
        }
        w.write_all(&s[start..i])?;
        match b {
            b'"' => w.write_all(b"\\\"")?,
            b'\\' => w.write_all(b"\\\\")?,
            b'\n' => w.write_all(b"\\n")?,
            b'\r' => w.write_all(b"\\r")?,
            b'\t' => w.write_all(b"\\t")?,
            0x08 => w.write_all(b"\\b")?,
            0x0c => w.write_all(b"\\f")?,
            _ => write!(w, "\\u{:04x}", b)?,
        }
        i += 1;
        start = i;
    }
    w.write_all(&s[start..])
}

/// "a string", "an array" …: what a JSON value is, for messages.
pub fn kind_of(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON value of an answer's field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// Text from the outside world, written lossily (see module doc).
    Text(Vec<u8>),
    Int(i64),
}

/// One compact JSON object with its keys in the order given.
pub fn write_object<W: Write + ?Sized>(w: &mut W, fields: &[(&str, Field)]) -> io::Result<()> {
    w.write_all(b"{")?;
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write_str(w, key.as_bytes())?;
        w.write_all(b":")?;
        match value {
            Field::Text(bytes) => write_str(w, bytes)?,
            Field::Int(n) => write!(w, "{n}")?,
        }
    }
    w.write_all(b"}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        write_str(&mut out, bytes).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_quotes_backslashes_and_controls() {
        assert_eq!(enc(b"a\"b\\c\n\t\r\x08\x0c"), r#""a\"b\\c\n\t\r\b\f""#);
        assert_eq!(enc(b"nul\0here\x1f"), r#""nul\u0000here\u001f""#);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_character() {
        assert_eq!(enc(b"ok\xff\xfe end"), "\"ok\u{FFFD}\u{FFFD} end\"");
        assert_eq!(enc("é✓".as_bytes()), "\"é✓\"");
        // A truncated multi-byte sequence at the end.
        assert_eq!(enc(b"a\xe2\x9c"), "\"a\u{FFFD}\"");
    }

    #[test]
    fn every_byte_string_gives_valid_json() {
        let all: Vec<u8> = (0..=255u8).collect();
        let text = enc(&all);
        let back: String = serde_json::from_str(&text).unwrap();
        assert!(back.starts_with("\0\u{1}"));
        assert_eq!(back.chars().filter(|&c| c == '\u{FFFD}').count(), 128);
    }

    #[test]
    fn object_keeps_key_order() {
        let mut out = Vec::new();
        write_object(
            &mut out,
            &[("output", Field::Text(b"hi".to_vec())), ("exit_code", Field::Int(0))],
        )
        .unwrap();
        assert_eq!(out, br#"{"output":"hi","exit_code":0}"#);
    }
}
