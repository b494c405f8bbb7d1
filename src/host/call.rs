//! Calling a tool as a host does (docs/SPEC.md, "Calls and the envelope"): the argument object on
//! stdin, then EOF; stdout and stderr captured; a time limit after which the
//! tool's whole process group is stopped; the outcome wrapped in the
//! envelope the model reads.
//!
//! - exit 0 and stdout one JSON object → `{"tool_success":true,"result":…}`
//! - time limit reached → `TOOL_TIMEOUT`, `exit_code` null
//! - any other exit, or killed by a signal → `TOOL_CRASHED` (`exit_code`
//!   128+N for signal N, as a shell reports it)
//! - exit 0 but stdout is not one JSON object, or larger than the output
//!   limit (`IKIGAI_TOOLS_MAX_OUTPUT`, 16 MiB, and a margin) → `INVALID_OUTPUT`
//! - no such tool → `TOOL_NOT_FOUND`
//!
//! Current ikigai releases read at most 64 KiB of a tool's stdout; this
//! host reads up to the output limit, which bounds the tools' whole answers
//! (docs/SPEC.md, "Output limit"), so it accepts every answer they give.
//! When the tool exits but something it left running still holds its
//! stdout, what is in the pipe is read and the rest is not waited for.

use std::time::Duration;

use serde_json::{json, Value};

use super::discover::seconds;
use super::registry::RegisteredTool;
use crate::process::status::signal_exit_code;
use crate::process::{self, Finished, Input, Status, TimedRun};

/// The time limit of a call (docs/SPEC.md's host side).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The `error_code` of a failed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureCode {
    ToolTimeout,
    ToolCrashed,
    InvalidOutput,
    ToolNotFound,
}

impl FailureCode {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCode::ToolTimeout => "TOOL_TIMEOUT",
            FailureCode::ToolCrashed => "TOOL_CRASHED",
            FailureCode::InvalidOutput => "INVALID_OUTPUT",
            FailureCode::ToolNotFound => "TOOL_NOT_FOUND",
        }
    }
}

/// What the model gets back from a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// The tool's own answer (which may itself be an error object: the tool
    /// ran fine and said the operation failed).
    Success(Value),
    Failure {
        error: String,
        code: FailureCode,
        /// None when the tool did not exit by itself (timeout, not found).
        exit_code: Option<i32>,
        stdout: String,
        stderr: String,
    },
}

impl Envelope {
    pub fn is_success(&self) -> bool {
        matches!(self, Envelope::Success(_))
    }

    /// The envelope as JSON, keys in the order of docs/SPEC.md.
    pub fn to_json(&self) -> Value {
        match self {
            Envelope::Success(result) => json!({ "tool_success": true, "result": result }),
            Envelope::Failure { error, code, exit_code, stdout, stderr } => json!({
                "tool_success": false,
                "error": error,
                "error_code": code.as_str(),
                "exit_code": exit_code,
                "stdout": stdout,
                "stderr": stderr,
            }),
        }
    }

    /// The envelope of a call to a tool the registry does not hold.
    pub fn not_found(name: &str) -> Envelope {
        Envelope::Failure {
            error: format!("Tool '{name}' not found"),
            code: FailureCode::ToolNotFound,
            exit_code: None,
            stdout: String::new(),
            stderr: String::new(),
        }
    }
}

/// Runs the tool with `args` (the argument object, as bytes) on stdin and
/// wraps what happened.
pub fn call(tool: &RegisteredTool, args: &[u8], timeout: Duration) -> Envelope {
    let finished = match tool.origin.command() {
        Ok((program, lead)) => process::run(TimedRun {
            program,
            args: lead,
            input: Input::Bytes(args.to_vec()),
            timeout,
            capture_limit: answer_capture(),
        }),
        Err(e) => Finished {
            status: Status::NotStarted(e),
            stdout: Default::default(),
            stderr: Default::default(),
        },
    };
    wrap(tool.name(), finished, timeout)
}

/// Room beyond the output limit for an answer: the tools' answers stay
/// within the limit, but the capture cuts only between characters, and a
/// tool of another make may end its answer with a newline.
const CAPTURE_MARGIN: usize = 4096;

/// How much of a tool's stdout is kept: every answer the limit allows.
fn answer_capture() -> Option<usize> {
    crate::context::max_output(crate::BIN_NAME).map(|limit| limit.saturating_add(CAPTURE_MARGIN))
}

/// The envelope for one finished run of the tool `name`.
pub fn wrap(name: &str, finished: Finished, timeout: Duration) -> Envelope {
    let failure = |error: String, code, exit_code| Envelope::Failure {
        error,
        code,
        exit_code,
        stdout: finished.stdout.text(),
        stderr: finished.stderr.text(),
    };
    match &finished.status {
        Status::TimedOut => failure(
            format!("Tool '{name}' timed out after {}", seconds(timeout)),
            FailureCode::ToolTimeout,
            None,
        ),
        Status::NotStarted(e) => failure(
            format!("Tool '{name}' could not be started: {e}"),
            // Removed since discovery: as good as not in the registry.
            if e.kind() == std::io::ErrorKind::NotFound {
                FailureCode::ToolNotFound
            } else {
                FailureCode::ToolCrashed
            },
            None,
        ),
        Status::Signaled(signal) => failure(
            format!(
                "Tool '{name}' crashed with exit code {} (killed by signal {signal})",
                signal_exit_code(*signal)
            ),
            FailureCode::ToolCrashed,
            Some(signal_exit_code(*signal)),
        ),
        Status::Exited(code) if *code != 0 => failure(
            format!("Tool '{name}' crashed with exit code {code}"),
            FailureCode::ToolCrashed,
            Some(*code),
        ),
        Status::Exited(code) => match parse_answer(&finished.stdout) {
            Ok(result) => Envelope::Success(result),
            Err(why) => failure(
                format!("Tool '{name}' returned invalid output: {why}"),
                FailureCode::InvalidOutput,
                Some(*code),
            ),
        },
    }
}

/// One JSON object, and nothing else but white space.
fn parse_answer(stdout: &process::Captured) -> Result<Value, String> {
    if stdout.omitted > 0 {
        let total = stdout.omitted + stdout.bytes.len() as u64;
        return Err(format!("more output than the limit allows (about {total} bytes)"));
    }
    if stdout.bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("no output".to_owned());
    }
    match serde_json::from_slice::<Value>(&stdout.bytes) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => {
            Err(format!("expected one JSON object, got {}", super::validate::kind(&other)))
        }
        Err(e) => Err(format!("not one JSON object: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use process::Captured;

    fn ran(status: Status, stdout: &str) -> Finished {
        Finished {
            status,
            stdout: Captured { bytes: stdout.as_bytes().to_vec(), omitted: 0 },
            stderr: Captured { bytes: b"warn\n".to_vec(), omitted: 0 },
        }
    }

    fn envelope(status: Status, stdout: &str) -> Value {
        wrap("t", ran(status, stdout), CALL_TIMEOUT).to_json()
    }

    #[test]
    fn a_clean_answer_is_wrapped_as_is() {
        assert_eq!(
            envelope(Status::Exited(0), "{\"b\":1,\"a\":[2]}\n"),
            json!({"tool_success": true, "result": {"b": 1, "a": [2]}})
        );
    }

    #[test]
    fn failures_carry_what_the_tool_printed() {
        assert_eq!(
            envelope(Status::Exited(0), "{} x"),
            json!({
                "tool_success": false,
                "error": "Tool 't' returned invalid output: not one JSON object: trailing characters at line 1 column 4",
                "error_code": "INVALID_OUTPUT",
                "exit_code": 0,
                "stdout": "{} x",
                "stderr": "warn\n"
            })
        );
        assert_eq!(
            envelope(Status::Exited(0), "[]")["error"],
            "Tool 't' returned invalid output: expected one JSON object, got an array"
        );
        assert_eq!(
            envelope(Status::Exited(0), "")["error"],
            "Tool 't' returned invalid output: no output"
        );
        let crashed = envelope(Status::Signaled(11), "{}");
        assert_eq!(crashed["error"], "Tool 't' crashed with exit code 139 (killed by signal 11)");
        assert_eq!(crashed["exit_code"], 139);
        let timed_out = envelope(Status::TimedOut, "partial");
        assert_eq!(timed_out["error"], "Tool 't' timed out after 30s");
        assert_eq!(timed_out["exit_code"], Value::Null);
        assert_eq!(timed_out["stdout"], "partial");
    }
}
