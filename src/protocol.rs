//! One call of a tool: the argument object in, one JSON object out.
//!
//! Two dialects share everything but where the arguments come from and how
//! an error is signalled:
//! - ikigai: arguments on stdin, the answer on stdout, exit 0 even for an
//!   error envelope (bad input is echoed on stderr as one line);
//! - shellclaw: arguments in `$1`, stdin untouched, exit 1 and the message
//!   on stderr when the answer is an error envelope.
//!
//! This module reads the arguments and writes the answer; what is left to
//! tell (the line for stderr, whether the exit status says failure) it
//! returns as an [`Ending`] for the command line to act on.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Read, Write};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::context::{Context, Dialect};
use crate::error::ToolError;
use crate::json::{self, Field};
use crate::limit::{overrun, unbounded_len, Bounded, Counting};

/// A tool's successful answer: its fields in the order they are printed.
pub type Answer = Vec<(&'static str, Field)>;

/// What a tool's `run` returns.
pub type Outcome = Result<Answer, ToolError>;

/// The parsed argument object, with typed accessors whose errors name the
/// parameter and the type expected.
#[derive(Debug, Clone, Default)]
pub struct Args {
    map: Map<String, Value>,
    /// Parameters whose value holds a number beyond what an f64 can hold
    /// (`1e400`): an error only if the tool reads them (docs/SPEC.md, "The protocol":
    /// unknown keys are ignored, whatever they hold).
    out_of_range: BTreeMap<String, Held>,
}

/// What an unreadable parameter holds, for the message about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// The value is itself a number out of range.
    Number,
    /// An array or object with such a number inside.
    Container,
}

impl Args {
    /// Parses the raw argument text: exactly one JSON object, nothing after
    /// it but whitespace.
    pub fn parse(bytes: &[u8]) -> Result<Args, ToolError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ToolError::InvalidJson(
                "invalid JSON: empty input, expected an object of arguments".to_owned(),
            ));
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(map)) => Ok(Args { map, out_of_range: BTreeMap::new() }),
            Ok(other) => Err(ToolError::InvalidJson(format!(
                "invalid JSON: expected an object of arguments, got {}",
                json::kind_of(&other)
            ))),
            Err(e) if is_number_out_of_range(&e) => Args::parse_by_key(bytes, &e),
            Err(e) => Err(invalid_json(&e, Position::default())),
        }
    }

    /// The slow path, for the rare object holding a number serde cannot
    /// hold: each top-level value is parsed on its own, so that such a
    /// number makes only its own parameter unreadable. Errors of any other
    /// kind are reported as the whole parse would have, at their place in
    /// the whole text.
    fn parse_by_key(bytes: &[u8], first: &serde_json::Error) -> Result<Args, ToolError> {
        // Raw values are checked for syntax only: a number is not converted.
        let raw: BTreeMap<String, &RawValue> = match serde_json::from_slice(bytes) {
            Ok(raw) => raw,
            Err(e) if e.classify() == serde_json::error::Category::Data => {
                // Not an object at all: the number is as good a complaint
                // as any (`[1e400]`).
                return Err(invalid_json(first, Position::default()));
            }
            Err(e) => return Err(invalid_json(&e, Position::default())),
        };
        // In the order of the text, so that the first error is the one told.
        let mut entries: Vec<(String, &RawValue)> = raw.into_iter().collect();
        entries.sort_by_key(|(_, value)| value.get().as_ptr() as usize);
        let mut args = Args::default();
        for (key, value) in entries {
            let text = value.get();
            match serde_json::from_str::<Value>(text) {
                Ok(value) => {
                    args.map.insert(key, value);
                }
                Err(e) if is_number_out_of_range(&e) => {
                    let held = if text.trim_start().starts_with(['[', '{']) {
                        Held::Container
                    } else {
                        Held::Number
                    };
                    args.out_of_range.insert(key, held);
                }
                Err(e) => {
                    // The raw value borrows from `bytes`: its place in them.
                    let offset = (text.as_ptr() as usize).saturating_sub(bytes.as_ptr() as usize);
                    let before = bytes.get(..offset).unwrap_or_default();
                    return Err(invalid_json(&e, Position::of(before)));
                }
            }
        }
        Ok(args)
    }

    /// The value of a parameter; `null` counts as absent. `Err` when it
    /// holds a number out of range, telling what that number is.
    fn get(&self, name: &str) -> Result<Option<&Value>, Held> {
        match self.out_of_range.get(name) {
            Some(held) => Err(*held),
            None => Ok(self.map.get(name).filter(|v| !v.is_null())),
        }
    }

    pub fn required_str(&self, name: &str) -> Result<&str, ToolError> {
        self.optional_str(name)?.ok_or_else(|| missing(name))
    }

    pub fn optional_str(&self, name: &str) -> Result<Option<&str>, ToolError> {
        match self.get(name) {
            Ok(None) => Ok(None),
            Ok(Some(Value::String(s))) => Ok(Some(s)),
            Ok(Some(_)) | Err(_) => Err(wrong_type(name, "a string")),
        }
    }

    /// A required path: a non-empty string without NUL bytes (the kernel
    /// cannot take either, and the model should hear why).
    pub fn required_path(&self, name: &str) -> Result<&str, ToolError> {
        let path = self.required_str(name)?;
        check_path(name, path)?;
        Ok(path)
    }

    /// An optional path; an empty string counts as absent (docs/SPEC.md: "Empty
    /// path: defaults to current directory").
    pub fn optional_path(&self, name: &str) -> Result<Option<&str>, ToolError> {
        match self.optional_str(name)? {
            None | Some("") => Ok(None),
            Some(path) => {
                check_path(name, path)?;
                Ok(Some(path))
            }
        }
    }

    /// An integer; a number with an integral value (`2.0`) counts too.
    /// Values beyond the range of i64 are clamped: as an offset or a limit
    /// they mean "past anything a file can hold" either way.
    pub fn optional_int(&self, name: &str) -> Result<Option<i64>, ToolError> {
        let value = match self.get(name) {
            Ok(None) => return Ok(None),
            Ok(Some(value)) => value,
            Err(Held::Number) => {
                return Err(ToolError::InvalidArg(format!(
                    "parameter {name} must be an integer: number out of range"
                )))
            }
            Err(Held::Container) => return Err(wrong_type(name, "an integer")),
        };
        let Value::Number(n) = value else {
            return Err(wrong_type(name, "an integer"));
        };
        if let Some(i) = n.as_i64() {
            return Ok(Some(i));
        }
        if n.as_u64().is_some() {
            return Ok(Some(i64::MAX));
        }
        match n.as_f64() {
            Some(f) if f.is_finite() && f.fract() == 0.0 => {
                // `as` saturates at the bounds of i64.
                Ok(Some(f as i64))
            }
            _ => Err(wrong_type(name, "an integer")),
        }
    }

    /// An array (file_edit's `edits`); its items are the tool's to read.
    pub fn optional_array(&self, name: &str) -> Result<Option<&[Value]>, ToolError> {
        match self.get(name) {
            Ok(None) => Ok(None),
            Ok(Some(Value::Array(items))) => Ok(Some(items)),
            Ok(Some(_)) | Err(_) => Err(wrong_type(name, "an array")),
        }
    }

    /// The names given a value (`null` counts as absent), in the order of
    /// the text (those holding a number out of range after the others).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        let given = self.map.iter().filter(|(_, v)| !v.is_null()).map(|(k, _)| k.as_str());
        given.chain(self.out_of_range.keys().map(String::as_str))
    }

    /// Whether the argument object has `name`, whatever it holds (`null`
    /// counts as absent).
    pub fn has(&self, name: &str) -> bool {
        self.out_of_range.contains_key(name) || self.map.get(name).is_some_and(|v| !v.is_null())
    }

    pub fn optional_bool(&self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.get(name) {
            Ok(None) => Ok(None),
            Ok(Some(Value::Bool(b))) => Ok(Some(*b)),
            Ok(Some(_)) | Err(_) => Err(wrong_type(name, "a boolean")),
        }
    }

    /// A count of the full profile's (lines, entries): an integer that may
    /// not be negative. (file_read's seed `offset` and `limit` keep the
    /// seed's own message.)
    pub fn optional_count(&self, name: &str) -> Result<Option<u64>, ToolError> {
        match self.optional_int(name)? {
            Some(n) if n < 0 => Err(ToolError::InvalidArg(format!(
                "parameter {name} must not be negative, got {n}"
            ))),
            n => Ok(n.map(|n| n as u64)),
        }
    }
}

fn check_path(name: &str, path: &str) -> Result<(), ToolError> {
    if path.is_empty() {
        return Err(ToolError::InvalidArg(format!("parameter {name} must not be empty")));
    }
    if path.contains('\0') {
        return Err(ToolError::InvalidArg(format!("parameter {name} must not contain NUL bytes")));
    }
    Ok(())
}

/// Whether serde_json gave up on a number it cannot hold as an f64
/// (`1e400`); its error type does not expose the code, only the text.
fn is_number_out_of_range(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("number out of range")
}

/// Where a piece of the argument text starts: the line, and the column
/// before its first byte (both as serde_json counts them).
#[derive(Debug, Clone, Copy, Default)]
struct Position {
    /// Lines before the piece's.
    lines: usize,
    /// Bytes before the piece on its line.
    columns: usize,
}

impl Position {
    fn of(before: &[u8]) -> Position {
        let lines = memchr::memchr_iter(b'\n', before).count();
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        Position { lines, columns: before.len() - line_start }
    }
}

/// The INVALID_JSON error for a serde_json error met `at` a piece of the
/// text. serde_json's message ends with " at line L column C"; the position
/// goes first so that the message reads the same everywhere.
fn invalid_json(e: &serde_json::Error, at: Position) -> ToolError {
    let text = e.to_string();
    let detail = text.rsplit_once(" at line ").map_or(text.as_str(), |(head, _)| head);
    let column = if e.line() == 1 { at.columns + e.column() } else { e.column() };
    ToolError::InvalidJson(format!(
        "invalid JSON at line {} column {}: {}",
        at.lines + e.line(),
        column,
        detail
    ))
}

fn missing(name: &str) -> ToolError {
    ToolError::InvalidArg(format!("missing required parameter: {name}"))
}

fn wrong_type(name: &str, expected: &str) -> ToolError {
    ToolError::InvalidArg(format!("parameter {name} must be {expected}"))
}

/// Reads the whole of stdin (ikigai dialect).
pub fn read_stdin() -> Result<Vec<u8>, ToolError> {
    let mut buf = Vec::new();
    io::stdin()
        .lock()
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::InvalidJson(format!("invalid JSON: cannot read stdin: {e}")))?;
    Ok(buf)
}

/// What is left to tell once the answer is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// The error message, for stderr as one line: bad input in both
    /// dialects (a human watching the host sees it), any error in
    /// shellclaw's.
    pub echo: Option<String>,
    /// Whether the exit status must say the call failed: an error envelope
    /// in the shellclaw dialect.
    pub failed: bool,
}

/// Writes the answer (or the error envelope) to stdout and says what the
/// call's dialect wants told besides.
///
/// An error envelope obeys the output limit as every answer does (docs/SPEC.md, "Output limit"): a
/// message too long for it (an 80 KB path) keeps its
/// head and tail around the marker, cut between characters with escaping
/// counted, so the printed envelope fits. The stderr copy is that same
/// message, what the model was told.
pub fn finish(outcome: &Outcome, context: &Context) -> Ending {
    let mut out = Counting::new(io::BufWriter::with_capacity(64 * 1024, unbuffered_stdout()));
    let (written, mut ending) = match outcome {
        Ok(fields) => (json::write_object(&mut out, fields), Ending { echo: None, failed: false }),
        Err(err) => {
            let (message, fields) = error_envelope(err, context.answer_limit(0));
            let written = json::write_object(&mut out, &fields);
            let shellclaw = context.dialect == Dialect::Shellclaw;
            let echo = (err.is_bad_input() || shellclaw).then_some(message);
            (written, Ending { echo, failed: shellclaw })
        }
    };
    // No answer goes over the limit unnoticed (`limit::overrun`).
    let unbounded = outcome.as_ref().map_or(0, |fields| unbounded_len(fields));
    if let Some(overrun) =
        overrun(out.written().saturating_sub(unbounded), context.whole_answer_limit())
    {
        ending.echo = Some(match ending.echo.take() {
            Some(message) => format!("{message} ({overrun})"),
            None => overrun,
        });
    }
    // At a terminal the answer ends its line, so that the stderr copy or
    // the shell's prompt does not run on after it; a pipe or a file (a
    // host) gets the protocol's exact bytes, no newline after the object.
    let written = written.and_then(|()| out.write_all(line_end(io::stdout().is_terminal())));
    // A host that closed its end of the pipe no longer wants the answer:
    // that is not an error of ours.
    let _ = written.and_then(|()| out.flush());
    ending
}

/// What follows the answer: a newline at a terminal, nothing otherwise.
fn line_end(stdout_is_terminal: bool) -> &'static [u8] {
    if stdout_is_terminal {
        b"\n"
    } else {
        b""
    }
}

/// The error envelope of `err` under `limit`, and its message:
/// `{"error","error_code"}`, then the fields a detailed error carries
/// (full profile) when they take at most half the limit (they are hints:
/// the message and the code come first); the message gets what is left.
fn error_envelope(err: &ToolError, limit: Option<usize>) -> (String, Answer) {
    let extra = err.fields();
    let mut written = Vec::new();
    let fits = extra.is_empty()
        || json::write_object(&mut written, extra).is_ok()
            && limit.is_none_or(|l| written.len() <= l / 2);
    let (extra, limit) = if fits {
        (extra, limit.map(|l| l.saturating_sub(written.len())))
    } else {
        (&[][..], limit)
    };
    let message = bounded_message(err, limit);
    let mut fields = vec![
        ("error", Field::Text(message.clone().into_bytes())),
        ("error_code", Field::Text(err.code().as_bytes().to_vec())),
    ];
    fields.extend(extra.iter().cloned());
    (message, fields)
}

/// The message of `err` as its envelope may hold it under `limit`: whole
/// if it fits, else its head and tail with the output limit's marker
/// between them (`limit::Bounded`, whose reserve holds the envelope).
fn bounded_message(err: &ToolError, limit: Option<usize>) -> String {
    let mut message = Bounded::for_answer(limit);
    message.push(err.to_string().as_bytes());
    // Cuts fall between characters of a `String`: nothing is lost here.
    String::from_utf8_lossy(&message.finish()).into_owned()
}

/// Standard output without std's line buffering, which searches every write
/// for a newline: a real cost for a many-megabyte answer (which holds none).
/// Falls back to the standard handle if the descriptor cannot be duplicated.
fn unbuffered_stdout() -> Box<dyn Write> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(io::stdout().lock()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Args {
        Args::parse(text.as_bytes()).unwrap()
    }

    fn err(text: &str) -> String {
        Args::parse(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn only_a_terminal_gets_a_newline_after_the_answer() {
        assert_eq!(line_end(true), b"\n");
        assert_eq!(line_end(false), b"");
    }

    #[test]
    fn malformed_json_names_the_position() {
        assert_eq!(err(""), "invalid JSON: empty input, expected an object of arguments");
        assert_eq!(err("[1]"), "invalid JSON: expected an object of arguments, got an array");
        assert_eq!(err(r#"{"a":1} x"#), "invalid JSON at line 1 column 9: trailing characters");
        assert_eq!(err(r#"{"a":"#), "invalid JSON at line 1 column 5: EOF while parsing a value");
    }

    #[test]
    fn integers_accept_integral_numbers_and_clamp() {
        let a = args(r#"{"a":2.0,"b":18446744073709551615,"c":-1e300,"d":2.5,"e":"3","f":null}"#);
        assert_eq!(a.optional_int("a"), Ok(Some(2)));
        assert_eq!(a.optional_int("b"), Ok(Some(i64::MAX)));
        assert_eq!(a.optional_int("c"), Ok(Some(i64::MIN)));
        assert_eq!(a.optional_int("d").unwrap_err().to_string(), "parameter d must be an integer");
        assert_eq!(a.optional_int("e").unwrap_err().to_string(), "parameter e must be an integer");
        assert_eq!(a.optional_int("f"), Ok(None));
    }

    #[test]
    fn numbers_out_of_range_matter_only_where_read() {
        let a = args(r#"{"s":"x","n":1e400,"c":[1,{"d":-1e999}],"i":2}"#);
        assert_eq!(a.required_str("s"), Ok("x"));
        assert_eq!(a.optional_int("i"), Ok(Some(2)));
        fn told<T: std::fmt::Debug>(r: Result<T, ToolError>) -> String {
            r.unwrap_err().to_string()
        }
        assert_eq!(
            told(a.optional_int("n")),
            "parameter n must be an integer: number out of range"
        );
        assert_eq!(told(a.optional_int("c")), "parameter c must be an integer");
        assert_eq!(told(a.optional_str("n")), "parameter n must be a string");
        assert_eq!(told(a.optional_bool("c")), "parameter c must be a boolean");
        // The last of two equal keys counts, as on the fast path.
        assert_eq!(args(r#"{"n":1e400,"n":"ok"}"#).optional_str("n"), Ok(Some("ok")));
        assert!(args(r#"{"n":"ok","n":1e400}"#).optional_str("n").is_err());
    }

    #[test]
    fn other_errors_beside_a_number_out_of_range_are_told_where_they_are() {
        assert_eq!(err("[1e400]"), "invalid JSON at line 1 column 6: number out of range");
        assert_eq!(err("{\"n\":1e400} x"), "invalid JSON at line 1 column 13: trailing characters");
        // Where the whole parse would have put it, had the number been small.
        assert_eq!(
            err("{\"n\":1e400,\n \"s\":\"\\ud800\"}"),
            err("{\"n\":1.000,\n \"s\":\"\\ud800\"}")
        );
    }

    #[test]
    fn paths_must_be_nonempty_and_free_of_nul() {
        let a = args(r#"{"p":"","q":"a\u0000b","r":"ok"}"#);
        assert_eq!(a.required_path("p").unwrap_err().to_string(), "parameter p must not be empty");
        assert_eq!(
            a.required_path("q").unwrap_err().to_string(),
            "parameter q must not contain NUL bytes"
        );
        assert_eq!(a.required_path("x").unwrap_err().to_string(), "missing required parameter: x");
        assert_eq!(a.optional_path("p"), Ok(None));
        assert_eq!(a.required_path("r"), Ok("ok"));
    }

    /// The printed envelope of an error under `limit`, as `finish` writes it.
    fn envelope(err: &ToolError, limit: Option<usize>) -> Vec<u8> {
        let mut out = Vec::new();
        json::write_object(&mut out, &error_envelope(err, limit).1).unwrap();
        out
    }

    #[test]
    fn a_detailed_error_carries_its_fields_within_the_limit() {
        let hint = |text: &str| {
            vec![
                ("edit", Field::Int(2)),
                (
                    "closest",
                    Field::Object(vec![
                        ("line", Field::Int(7)),
                        ("text", Field::Text(text.into())),
                    ]),
                ),
                ("lines", Field::List(vec![Field::Int(1), Field::Int(3)])),
            ]
        };
        let err = ToolError::NotFound.detailed(Some("edits[2].old_string".into()), hint("let x"));
        assert_eq!(
            String::from_utf8(envelope(&err, Some(1024))).unwrap(),
            r#"{"error":"String not found in file (edits[2].old_string)","error_code":"NOT_FOUND","edit":2,"closest":{"line":7,"text":"let x"},"lines":[1,3]}"#
        );
        // Fields too large for half the limit are left out; the message is
        // cut to what the fields leave.
        let huge = ToolError::NotFound.detailed(None, hint(&"\u{1}".repeat(200)));
        assert_eq!(
            envelope(&huge, Some(1024)),
            br#"{"error":"String not found in file","error_code":"NOT_FOUND"}"#
        );
        assert!(envelope(&huge, None).len() > 1024);
        let long = ToolError::InvalidArg("x".repeat(5000)).detailed(None, hint("let x"));
        let out = envelope(&long, Some(1024));
        assert!(out.len() <= 1024, "{}", out.len());
        assert!(out.ends_with(br#""lines":[1,3]}"#));
    }

    #[test]
    fn an_error_envelope_stays_within_the_limit() {
        let long = |piece: &str| piece.repeat(70_000);
        for path in [long("a"), long("\u{1}"), long("é✓𝄞"), long("\"\n")] {
            for err in [
                ToolError::PermissionDenied(path.clone()),
                ToolError::FileNotFound(path.clone()),
                ToolError::EditLocked(path.clone()),
                ToolError::InvalidArg(path.clone()),
            ] {
                for limit in [1024, 1500, 65_535] {
                    let out = envelope(&err, Some(limit));
                    assert!(out.len() <= limit, "{} > {limit}", out.len());
                    let v: Value = serde_json::from_slice(&out).unwrap();
                    assert_eq!(v["error_code"], err.code());
                    let message = v["error"].as_str().unwrap();
                    assert!(message.contains(" bytes omitted ...]"));
                    assert!(!message.contains('\u{FFFD}'), "cut between characters");
                    let whole = err.to_string();
                    let (head, rest) = message.split_once("[... ").unwrap();
                    let (_, tail) = rest.split_once(" bytes omitted ...]").unwrap();
                    assert!(whole.starts_with(head.trim_end_matches('\n')));
                    assert!(whole.ends_with(tail.trim_start_matches('\n')));
                }
            }
        }
        // A message that fits is whole; without a limit, every message is.
        let short = ToolError::FileNotFound("a.txt".into());
        assert_eq!(
            envelope(&short, Some(1024)),
            br#"{"error":"File not found: a.txt","error_code":"FILE_NOT_FOUND"}"#
        );
        let huge = ToolError::FileNotFound("a".repeat(100_000));
        assert_eq!(bounded_message(&huge, None), huge.to_string());
    }
}
