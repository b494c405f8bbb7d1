//! `ikigai-tools mcp` over raw JSON-RPC lines (docs/MCP.md): the handshake
//! of every revision, what a bad line or an unknown name gets, and the
//! processes behind a call — gone after a cancellation or when stdin
//! closes, and never taking the server with them. The official Python SDK
//! drives the rest (tests/mcp/run.sh).

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::mcp::{
    answer_roots_list, exists, file_uri, initialize_params, pids_of, sleeper, unconfined, Session,
    PATIENCE,
};
use common::procs::assert_gone_within;
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

#[test]
fn mcp_initialize_answers_every_handshake_revision() {
    let env = Env::new();
    for revision in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut session = Session::start(&env);
        let answer = session.request(1, "initialize", initialize_params(revision));
        assert_eq!(answer["result"]["protocolVersion"], revision, "{answer}");
        assert_eq!(answer["result"]["serverInfo"]["name"], "ikigai-tools");
        assert!(answer["result"]["capabilities"]["tools"].is_object());
    }
    // A revision it does not know: it offers the newest it has.
    let mut session = Session::start(&env);
    let answer = session.request(1, "initialize", initialize_params("2024-01-01"));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
}

#[test]
fn mcp_a_garbage_line_is_a_parse_error_and_the_server_goes_on() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    session.send_line("this is not json {");
    let answer = session.next(PATIENCE).expect("an answer to the garbage line");
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    session.assert_pings(2);
}

#[test]
fn mcp_an_unknown_method_is_method_not_found() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let answer = session.request(2, "tools/frobnicate", json!({}));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    session.assert_pings(3);
}

#[test]
fn mcp_an_unknown_tool_is_invalid_params() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let answer = session.call(2, "cat", json!({"file_path": "x"}));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("'cat'")), "{answer}");
}

#[test]
fn mcp_malformed_call_params_are_invalid_params_not_an_unknown_method() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    for (id, params) in [
        (2, json!({"name": "file_read", "arguments": "file_path=x"})),
        (3, json!({"arguments": {}})),
        (4, Value::Null),
    ] {
        let answer = session.request(id, "tools/call", params);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }
    session.assert_pings(5);
}

#[test]
fn mcp_a_call_answers_as_the_command_line() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    let mut session = Session::initialized(&env);
    let answer = session.call(2, "file_read", json!({"file_path": "a.txt", "offset": 2}));
    // The server serves the full profile: the command line's answer there.
    let cli = env.call_full("file_read", json!({"file_path": "a.txt", "offset": 2}));
    let text = format!("two\n\ntotal_lines: 2\nsha256: {}", cli["sha256"].as_str().unwrap());
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text": text}], "structuredContent": cli, "isError": false})
    );
    let answer = session.call(3, "bash", json!({"command": "echo out; echo err >&2; exit 4"}));
    assert_eq!(answer["result"]["content"][0]["text"], "out\nerr\nexit_code: 4");
    let answer = session.call(4, "file_read", json!({"file_path": "missing"}));
    assert_eq!(answer["result"]["isError"], true);
    let text = format!("FILE_NOT_FOUND: File not found: missing{}", env.looked_for("missing"));
    assert_eq!(answer["result"]["content"][0]["text"], text);
}

#[test]
fn mcp_a_tool_process_killed_or_aborted_leaves_the_server_answering() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    // $PPID of the shell is the tool process, the server's child.
    for (id, signal, name) in [(2, "KILL", "9 (SIGKILL)"), (3, "ABRT", "6 (SIGABRT)")] {
        let answer = session.call(id, "bash", json!({"command": format!("kill -{signal} $PPID")}));
        let text =
            format!("TOOL_CRASHED: the bash process was killed by signal {name} without an answer");
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], text);
    }
    session.assert_pings(4);
    let answer = session.call(5, "bash", json!({"command": "echo still"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "still", "exit_code": 0}));
}

#[test]
fn mcp_cancel_kills_the_command_and_sends_no_response() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let pidfile = env.path("pids");
    session.send(2, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
    let pids = pids_of(&pidfile);
    assert_eq!(pids.len(), 2);
    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}})
            .to_string(),
    );
    assert_gone_within(&pids, PATIENCE);
    // Whatever comes before the ping's answer, none of it answers the call.
    session.send(3, "ping", json!({}));
    let (_, before) = session.response(3);
    assert!(before.iter().all(|m| m["id"] != 2), "a response for the cancelled call: {before:?}");
    // Nor does one come later.
    session.assert_pings(4);
    assert_eq!(session.next(Duration::from_millis(200)), None);
}

#[test]
fn mcp_closing_stdin_exits_at_once_and_ends_running_calls() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let pidfile = env.path("pids");
    session.send(2, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
    let pids = pids_of(&pidfile);
    let closed = Instant::now();
    let status = session.end();
    // rmcp's own transport waits five seconds for running calls to answer.
    assert!(closed.elapsed() < Duration::from_secs(4), "exit took {:?}", closed.elapsed());
    assert_eq!(status.code(), Some(0));
    assert_gone_within(&pids, PATIENCE);
}

#[test]
fn mcp_sigterm_to_the_server_ends_running_calls() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let pidfile = env.path("pids");
    session.send(2, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
    let pids = pids_of(&pidfile);
    let server = Pid::from_raw(session.pid());
    kill(server, Signal::SIGTERM).expect("signal the server");
    let status = session.exit_status();
    assert_eq!(status.code(), Some(128 + 15));
    assert_gone_within(&pids, PATIENCE);
}

// --- roots (docs/MCP.md, "Confining a session") ------------------------------

/// A bash call writing `inside/f` and `outside/f`; what each file holds after.
pub(crate) fn write_both(session: &mut Session, id: i64, inside: &Path, outside: &Path) -> Value {
    let (i, o) = (inside.join("f"), outside.join("f"));
    let command = format!("echo in > '{}'; echo out > '{}'; true", i.display(), o.display());
    let answer = session.call(id, "bash", json!({"command": command}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer
}

#[test]
fn mcp_root_confines_bash_writes_to_it() {
    let env = Env::new();
    let (proj, elsewhere) = (env.mkdir("proj"), env.mkdir("elsewhere"));
    let mut session =
        Session::initialized_with(&env, &["--root".as_ref(), proj.as_ref()], json!({}));
    write_both(&mut session, 2, &proj, &elsewhere);
    assert_eq!(env.read("proj/f"), b"in\n");
    assert!(!exists(&elsewhere.join("f")), "the kernel let bash write outside the root");

    // The same write without roots goes through.
    let mut unconfined = Session::initialized(&env);
    write_both(&mut unconfined, 2, &proj, &elsewhere);
    assert_eq!(env.read("elsewhere/f"), b"out\n");
}

#[test]
fn mcp_a_missing_root_is_a_usage_error_at_start() {
    let env = Env::new();
    let missing = env.path("missing");
    let ran = Command::new(env.link("ikigai-tools"))
        .args(["mcp".as_ref(), "--root".as_ref(), missing.as_os_str()])
        .current_dir(env.work())
        .stdin(Stdio::null())
        .output()
        .expect("run ikigai-tools mcp");
    assert_eq!(ran.status.code(), Some(2));
    assert_eq!(ran.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&ran.stderr),
        format!(
            "ikigai-tools mcp: allowed root {} cannot be used: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[test]
fn mcp_a_root_holding_a_colon_is_a_usage_error_at_start() {
    // IKIGAI_TOOLS_ROOTS, which carries the roots to each call, is
    // colon-separated: such a root cannot be passed on.
    let env = Env::new();
    let odd = env.mkdir("a:b");
    let ran = Command::new(env.link("ikigai-tools"))
        .args(["mcp".as_ref(), "--root".as_ref(), odd.as_os_str()])
        .current_dir(env.work())
        .stdin(Stdio::null())
        .output()
        .expect("run ikigai-tools mcp");
    assert_eq!(ran.status.code(), Some(2));
    let real = odd.canonicalize().expect("canonical path");
    assert_eq!(
        String::from_utf8_lossy(&ran.stderr),
        format!(
            "ikigai-tools mcp: allowed root {} holds a ':', which IKIGAI_TOOLS_ROOTS cannot \
             carry; use a link to it without one\n",
            real.display()
        )
    );
}

/// The client's roots narrow `--root`'s (a ceiling: docs/MCP.md,
/// "Confining a session") and follow `roots/list_changed`; an empty list
/// brings back the `--root` directory.
#[test]
fn mcp_client_roots_narrow_the_command_line_ones_and_follow_list_changed() {
    let env = Env::new();
    let (p, elsewhere) = (env.mkdir("p"), env.mkdir("elsewhere"));
    let (a, b) = (env.mkdir("p/a"), env.mkdir("p/b"));
    let offers_roots = json!({"roots": {"listChanged": true}});
    let mut session =
        Session::initialized_with(&env, &["--root".as_ref(), p.as_ref()], offers_roots);
    answer_roots_list(&mut session, &[file_uri(&a), "https://example.com/x".to_owned()]);
    write_both(&mut session, 2, &a, &b);
    assert!(exists(&a.join("f")), "the client's root is writable");
    assert!(!exists(&b.join("f")), "the command-line root was narrowed to the client's");

    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}).to_string(),
    );
    answer_roots_list(&mut session, &[file_uri(&b)]);
    std::fs::remove_file(a.join("f")).expect("remove a/f");
    write_both(&mut session, 3, &b, &a);
    assert!(exists(&b.join("f")), "the new root is writable");
    assert!(!exists(&a.join("f")), "the old root is no longer writable");

    // An empty list names no roots: the --root one stays in force.
    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}).to_string(),
    );
    answer_roots_list(&mut session, &[]);
    write_both(&mut session, 4, &a, &elsewhere);
    assert!(exists(&a.join("f")), "the --root directory is writable after an empty list");
    assert!(!exists(&elsewhere.join("f")), "bash wrote outside the --root directory");
}

fn list_changed(session: &mut Session) {
    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}).to_string(),
    );
}

/// The server's next message, which must be a `roots/list` request: its id.
fn roots_question(session: &Session) -> Value {
    let question = session.next(PATIENCE).expect("the server asks roots/list");
    assert_eq!(question["method"], "roots/list", "{question}");
    question["id"].clone()
}

/// `outside/secret.txt` beside `work/`, out of every root of these tests.
fn outside_secret(env: &Env) -> std::path::PathBuf {
    let outside = env.mkdir("../outside");
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, SECRET).expect("write the secret");
    secret
}

const SECRET: &str = "SECRET outside every root";

/// Asserts that a call was refused with `PERMISSION_DENIED` whose text
/// holds `says`, and never showed the secret.
fn assert_refused(answer: &Value, says: &str) {
    assert!(!answer.to_string().contains(SECRET), "the secret leaked: {answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED",
        "{answer}"
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains(says), "{text:?} does not say {says:?}");
}

/// A file_read of the secret and a bash write beside it, both refused.
fn assert_nothing_outside(session: &mut Session, id: i64, secret: &Path, says: &str) {
    let read = session.call(id, "file_read", json!({"file_path": secret}));
    assert_refused(&read, says);
    let escaped = secret.with_file_name("escaped");
    let command = format!("echo out > '{}'", escaped.display());
    let wrote = session.call(id + 1, "bash", json!({"command": command}));
    assert!(!exists(&escaped), "bash wrote outside the roots: {wrote}");
}

/// Guards a break found by attacking the MCP roots: a client that answered
/// `roots/list` with an error left the session unconfined, or confined by the
/// wider `--root` directory.
#[test]
fn mcp_a_roots_list_error_refuses_calls_never_falls_back() {
    let env = Env::new();
    let (cli, a) = (env.mkdir("cli"), env.mkdir("cli/a"));
    let secret = outside_secret(&env);
    std::fs::write(cli.join("secret.txt"), SECRET).expect("write");
    let offers_roots = json!({"roots": {"listChanged": true}});
    // Without --root, or --unconfined (the fallback was no confinement at
    // all), and with one (the fallback was the --root directory, wider than
    // the client's).
    let unconfined = unconfined().to_vec();
    for args in [vec![], unconfined, vec!["--root".as_ref(), cli.as_os_str()]] {
        let mut session = Session::initialized_with(&env, &args, offers_roots.clone());
        answer_roots_list(&mut session, &[file_uri(&a)]);
        list_changed(&mut session);
        let id = roots_question(&session);
        let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "no"}});
        session.send_line(&error.to_string());
        let says = "the MCP client answered roots/list with an error";
        assert_nothing_outside(&mut session, 2, &secret, says);
        let read = session.call(4, "file_read", json!({"file_path": cli.join("secret.txt")}));
        assert_refused(&read, says);
        // A later answer confines again.
        list_changed(&mut session);
        answer_roots_list(&mut session, &[file_uri(&a)]);
        std::fs::write(a.join("in.txt"), "inside").expect("write");
        let read = session.call(5, "file_read", json!({"file_path": a.join("in.txt")}));
        assert_eq!(read["result"]["isError"], false, "{read}");
        assert_nothing_outside(&mut session, 6, &secret, "outside the allowed roots");
    }
}

/// Guards a break found by attacking the MCP roots: a client that did not
/// answer `roots/list` left calls running under the roots it had before.
#[test]
fn mcp_a_late_roots_list_answer_refuses_calls_until_it_arrives() {
    let env = Env::new();
    let a = env.mkdir("a");
    let secret = outside_secret(&env);
    let offers_roots = json!({"roots": {"listChanged": true}});
    let mut session = Session::initialized_with(&env, &[], offers_roots);
    answer_roots_list(&mut session, &[file_uri(&a)]);
    list_changed(&mut session);
    let id = roots_question(&session);
    // Not answered: the call waits the 10 s, then is refused.
    session.send(2, "tools/call", json!({"name": "file_read", "arguments": {"file_path": secret}}));
    let (read, _) = session.response_within(2, PATIENCE * 2);
    assert_refused(&read, "the MCP client did not answer roots/list within 10 s");
    let escaped = secret.with_file_name("escaped");
    let command = format!("echo out > '{}'", escaped.display());
    session.call(3, "bash", json!({"command": command}));
    assert!(!exists(&escaped), "bash wrote outside while roots/list was unanswered");
    // The late answer is taken.
    let roots = json!({"roots": [{"uri": file_uri(&a)}]});
    session.send_line(&json!({"jsonrpc": "2.0", "id": id, "result": roots}).to_string());
    let write = session.call(4, "file_write", json!({"file_path": a.join("late"), "content": "x"}));
    assert_eq!(write["result"]["isError"], false, "{write}");
    assert_nothing_outside(&mut session, 5, &secret, "outside the allowed roots");
}

/// Guards a break found by attacking the MCP roots: a client naming no roots,
/// with no `--root`, left the session unconfined.
#[test]
fn mcp_an_empty_client_list_without_root_refuses_saying_to_pass_root() {
    let env = Env::new();
    let secret = outside_secret(&env);
    let offers_roots = json!({"roots": {"listChanged": true}});
    let mut session = Session::initialized_with(&env, &[], offers_roots);
    answer_roots_list(&mut session, &[]);
    assert_nothing_outside(&mut session, 2, &secret, "ikigai-tools mcp --root DIR");
}

/// Guards a break found by attacking the MCP roots: a call inside a session
/// that carried the stateless revision in `_meta` (and its own roots) ran
/// outside the session's roots.
#[test]
fn mcp_a_stateless_meta_call_inside_a_session_is_confined_by_the_session_roots() {
    let env = Env::new();
    let a = env.mkdir("a");
    let secret = outside_secret(&env);
    let offers_roots = json!({"roots": {"listChanged": true}});
    let mut session = Session::initialized_with(&env, &[], offers_roots);
    answer_roots_list(&mut session, &[file_uri(&a)]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let escaped = secret.with_file_name("escaped");
    let command = format!("echo out > '{}'", escaped.display());
    // The revision in `_meta` with no roots capability (the command line's
    // roots: none), and with the roots "answered" in the request itself.
    let wide = json!({"roots": {"roots": [{"uri": "file:///"}]}});
    let mut with_roots = meta.clone();
    with_roots["io.modelcontextprotocol/clientCapabilities"] = json!({"roots": {}});
    for (i, (meta, responses)) in [(meta, Value::Null), (with_roots, wide)].into_iter().enumerate()
    {
        let id = 2 + 2 * i as i64;
        let mut params =
            json!({"name": "file_read", "arguments": {"file_path": secret}, "_meta": meta});
        if !responses.is_null() {
            params["inputResponses"] = responses.clone();
        }
        let read = session.request(id, "tools/call", params.clone());
        assert_refused(&read, "outside the allowed roots");
        params["name"] = json!("bash");
        params["arguments"] = json!({"command": command});
        session.request(id + 1, "tools/call", params);
        assert!(!exists(&escaped), "bash wrote outside the session's roots");
    }
}
