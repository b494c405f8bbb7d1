//! Answers sized for MCP hosts (docs/MCP.md, "Answers sized for the
//! hosts"): the server's output limit, given to every call so that the tool
//! cuts its own answer as on the command line; declared on each tool as
//! `_meta["anthropic/maxResultSizeChars"]`; `structuredContent` only while
//! small, so that the output never travels twice; an error's text short;
//! and the full profile's `tools/list` itself under 10.5 KiB.

use crate::common::mcp::{Session, PATIENCE};
use crate::common::*;

use std::ffi::OsStr;

use serde_json::{json, Value};

/// The server's default limit (`context::MCP_MAX_OUTPUT`).
const DEFAULT_LIMIT: usize = 24_000;
/// `mcp::server::STRUCTURED_MAX`.
const STRUCTURED_MAX: usize = 4096;
/// `mcp::text::ERROR_TEXT_MAX`.
const ERROR_TEXT_MAX: usize = 10_000;
/// What a JSON-RPC line holds beside the text of a result, at most.
const ENVELOPE: usize = 256;

/// A session past the handshake, the server started `--unconfined` with
/// `args` and the environment `vars`.
fn session(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Session {
    let args: Vec<&OsStr> = ["--unconfined"].iter().chain(args).map(OsStr::new).collect();
    let mut session = Session::start_with_vars(env, &args, vars);
    let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tests", "version": "0"}});
    let answer = session.request(1, "initialize", params);
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18", "{answer}");
    session.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    session
}

/// The `_meta` of every tool listed.
fn metas(session: &mut Session) -> Vec<Value> {
    let answer = session.request(2, "tools/list", json!({}));
    let tools = answer["result"]["tools"].as_array().cloned().unwrap_or_default();
    assert!(!tools.is_empty(), "{answer}");
    tools.iter().map(|tool| tool.get("_meta").cloned().unwrap_or(Value::Null)).collect()
}

/// The most bytes the full profile's `tools/list` may take (9 KiB for issue
/// 26's twelve tools; 10.5 KiB with issue 27's two web tools, 700 bytes
/// each): every MCP host sends the list with every turn of the conversation.
const TOOLS_LIST_MAX: usize = 10 * 1024 + 512;

#[test]
fn mcp_size_the_full_profile_tools_list_is_under_10_and_a_half_kib() {
    let env = Env::new();
    let mut session = session(&env, &[], &[]);
    session.send(2, "tools/list", json!({}));
    let line = session.next_line(PATIENCE).expect("an answer to tools/list");
    let message: Value = serde_json::from_str(&line).unwrap();
    let tools = message["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> =
        ikigai_tools::tools::of(ikigai_tools::profile::Profile::Full).map(|t| t.name).collect();
    assert_eq!(names, expected);
    println!("tools/list in the full profile: {} bytes, {} tools", line.len(), names.len());
    assert!(line.len() < TOOLS_LIST_MAX, "tools/list is {} bytes: {names:?}", line.len());
}

fn declared(limit: usize) -> Value {
    json!({"anthropic/maxResultSizeChars": limit})
}

/// The line of the response to `tools/call` `id`, as sent.
fn call_line(session: &mut Session, id: i64, tool: &str, arguments: Value) -> String {
    session.send(id, "tools/call", json!({"name": tool, "arguments": arguments}));
    loop {
        let line = session.next_line(PATIENCE).unwrap_or_else(|| panic!("no response {id}"));
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == id && message.get("method").is_none() {
            return line;
        }
    }
}

/// `HEAD`, `bytes` bytes of `x`, `TAIL`, each on a line.
fn flood(bytes: u64) -> Value {
    json!({"command": format!("echo HEAD; head -c {bytes} /dev/zero | tr '\\0' x; echo; echo TAIL")})
}

/// The text a model reads of a bash answer: its output, then its fields.
fn rendered(answer: &Value) -> String {
    let mut text = answer["output"].as_str().unwrap().to_owned();
    for (key, value) in answer.as_object().unwrap().iter().filter(|(k, _)| *k != "output") {
        text.push_str(&format!("\n{key}: {value}"));
    }
    text
}

#[test]
fn mcp_size_a_100_mb_output_is_one_line_under_the_declared_size_with_head_tail_and_marker() {
    let env = Env::new();
    let mut session = session(&env, &[], &[]);
    assert_eq!(metas(&mut session)[0], declared(DEFAULT_LIMIT));
    let line = call_line(&mut session, 3, "bash", flood(100_000_000));
    let message: Value = serde_json::from_str(&line).unwrap();
    let result = &message["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.chars().count() <= DEFAULT_LIMIT, "{} characters", text.chars().count());
    assert!(line.len() <= DEFAULT_LIMIT + ENVELOPE, "a line of {} bytes", line.len());
    // Exactly the command line's cut under the same limit: head, marker, tail.
    let cli = env
        .cmd("bash")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        // Run in the foreground, as the MCP server runs it (no yield).
        .env("IKIGAI_TOOLS_YIELD", "0")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", DEFAULT_LIMIT.to_string())
        .stdin(flood(100_000_000).to_string())
        .run()
        .json();
    assert_eq!(text, rendered(&cli));
    assert!(text.starts_with("HEAD\nxxx"), "{}", &text[..20]);
    assert!(text.ends_with("xxx\nTAIL\nexit_code: 0"), "{}", &text[text.len() - 30..]);
    let marker = text.lines().find(|l| l.starts_with("[... ")).unwrap();
    // Kept: all but the marker's line and the field; bash's output loses
    // its final newline.
    let kept = text.len() - marker.len() - "\n\n".len() - "\nexit_code: 0".len();
    let omitted = 5 + 100_000_000 + 5 - kept;
    assert!(marker
        .starts_with(&format!("[... {omitted} bytes omitted (cut inside line 2), not kept: ")));
    assert_eq!(result["isError"], false);
}

#[test]
fn mcp_size_structured_content_carries_a_small_answer_whole_and_never_doubles_a_large_one() {
    let env = Env::new();
    let mut session = session(&env, &[], &[]);
    let small = call_line(&mut session, 3, "bash", json!({"command": "echo hi"}));
    let small: Value = serde_json::from_str(&small).unwrap();
    assert_eq!(
        small["result"],
        json!({"content": [{"type": "text", "text": "hi\nexit_code: 0"}],
            "structuredContent": {"output": "hi", "exit_code": 0}, "isError": false})
    );
    // Past STRUCTURED_MAX, the text alone carries the answer, every field.
    let line = call_line(&mut session, 4, "bash", flood(STRUCTURED_MAX as u64));
    let large: Value = serde_json::from_str(&line).unwrap();
    let text = large["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, format!("HEAD\n{}\nTAIL\nexit_code: 0", "x".repeat(STRUCTURED_MAX)));
    assert_eq!(
        large["result"],
        json!({"content": [{"type": "text", "text": text}], "isError": false})
    );
    assert!(line.len() <= text.len() + ENVELOPE, "a line of {} bytes", line.len());
}

#[test]
fn mcp_size_every_tool_declares_max_result_size_chars_as_the_limit() {
    let env = Env::new();
    for (args, expected) in [
        (&[][..], declared(DEFAULT_LIMIT)),
        (&["--max-output", "50000"][..], declared(50_000)),
        (&["--max-output", "10"][..], declared(1024)),
        (&["--profile", "seed"][..], declared(DEFAULT_LIMIT)),
        (&["--max-output", "0"][..], Value::Null),
    ] {
        let metas = metas(&mut session(&env, args, &[]));
        assert!(metas.iter().all(|meta| *meta == expected), "{args:?}: {metas:?}");
    }
}

/// The server's arguments, its environment, the limit they make.
type Case = (&'static [&'static str], &'static [(&'static str, &'static str)], usize);

#[test]
fn mcp_size_max_output_option_and_variable_set_the_limit() {
    let env = Env::new();
    let cases: [Case; 3] = [
        (&["--max-output", "2000"], &[], 2000),
        (&[], &[("IKIGAI_TOOLS_MAX_OUTPUT", "3000")], 3000),
        (&["--max-output", "2500"], &[("IKIGAI_TOOLS_MAX_OUTPUT", "3000")], 2500),
    ];
    for (args, vars, limit) in cases {
        let mut session = session(&env, args, vars);
        assert_eq!(metas(&mut session)[0], declared(limit), "{args:?} {vars:?}");
        let line = call_line(&mut session, 3, "bash", flood(100_000));
        let message: Value = serde_json::from_str(&line).unwrap();
        let text = message["result"]["content"][0]["text"].as_str().unwrap();
        let cli = env
            .cmd("bash")
            .env("IKIGAI_TOOLS_PROFILE", "full")
            .env("IKIGAI_TOOLS_YIELD", "0")
            .env("IKIGAI_TOOLS_MAX_OUTPUT", limit.to_string())
            .stdin(flood(100_000).to_string())
            .run()
            .json();
        assert_eq!(text, rendered(&cli), "{args:?} {vars:?}");
        assert!(text.len() <= limit && text.len() > limit - 200, "{}", text.len());
        assert!(
            text.contains(" bytes omitted (cut inside line 2), not kept: run the command again"),
            "{text}"
        );
    }
    // Unlimited: the whole output.
    let mut session = session(&env, &["--max-output", "0"], &[]);
    let line = call_line(&mut session, 3, "bash", flood(100_000));
    let message: Value = serde_json::from_str(&line).unwrap();
    let text = message["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, format!("HEAD\n{}\nTAIL\nexit_code: 0", "x".repeat(100_000)));
}

#[test]
fn mcp_size_an_error_text_stays_short_with_its_code_head_and_tail() {
    let env = Env::new();
    let mut session = session(&env, &["--max-output", "0"], &[]);
    let path = format!("{}end", "d/".repeat(20_000));
    let line = call_line(&mut session, 3, "file_read", json!({"file_path": path}));
    let message: Value = serde_json::from_str(&line).unwrap();
    let result = &message["result"];
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.len() <= ERROR_TEXT_MAX, "{}", text.len());
    // The command line's whole error, unlimited, is what was cut.
    let cli = env
        .cmd("file_read")
        .env("IKIGAI_TOOLS_PROFILE", "full")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "0")
        .stdin(json!({"file_path": path}).to_string())
        .run()
        .json();
    let whole =
        format!("{}: {}", cli["error_code"].as_str().unwrap(), cli["error"].as_str().unwrap());
    assert!(whole.len() > 40_000, "{whole}");
    let (head, rest) = text.split_once("\n[... ").unwrap();
    let (omitted, tail) = rest.split_once(" bytes omitted ...]\n").unwrap();
    assert!(head.starts_with("OPEN_FAILED: Cannot open file: d/d/"), "{head}");
    assert!(whole.starts_with(head) && whole.ends_with(tail), "{text}");
    assert_eq!(omitted.parse::<usize>().unwrap(), whole.len() - head.len() - tail.len());
    // Over STRUCTURED_MAX: the text alone.
    assert_eq!(result.get("structuredContent"), None);
}

#[test]
fn mcp_size_an_image_past_the_limit_is_sent_whole_as_image_content() {
    // The limit bounds the text; the image travels as an image, once.
    let env = Env::new();
    let mut image = crate::full_file_read::png(2, 2);
    image.resize(100_000, 0);
    env.write("big.png", &image);
    let mut session = session(&env, &[], &[]);
    let line = call_line(&mut session, 3, "file_read", json!({"file_path": "big.png"}));
    let message: Value = serde_json::from_str(&line).unwrap();
    let sha256 = env.call_full("file_read", json!({"file_path": "big.png"}))["sha256"].clone();
    let described = "Image: PNG, 2x2, 100000 bytes";
    assert_eq!(
        message["result"],
        json!({"content": [
            {"type": "text", "text": format!("{described}\nsha256: {}", sha256.as_str().unwrap())},
            {"type": "image", "data": crate::full_file_read::base64(&image), "mimeType": "image/png"}
        ], "structuredContent": {"output": described, "sha256": sha256}, "isError": false})
    );
}
