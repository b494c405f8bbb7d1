//! `ikigai-tools mcp` over raw JSON-RPC lines (CONTRACT §7): the handshake
//! of every revision, what a bad line or an unknown name gets, and the
//! processes behind a call — gone after a cancellation or when stdin
//! closes, and never taking the server with them. The official Python SDK
//! drives the rest (tests/mcp/run.sh).

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

/// Long enough for any answer on a loaded machine; a hang fails, it does not stall.
const PATIENCE: Duration = Duration::from_secs(10);

/// One server, spoken to line by line.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Session {
    fn start(env: &Env) -> Session {
        Session::start_with(env, &[])
    }

    /// A server started as `ikigai-tools mcp ARGS…`. Its `TMPDIR` is `tmp/`
    /// beside `work/`: confined bash may write to the temporary directory,
    /// and the system's `/tmp` holds the fixtures that must be outside.
    fn start_with(env: &Env, args: &[&std::ffi::OsStr]) -> Session {
        let tmp = env.mkdir("../tmp");
        let mut child = Command::new(env.link("ikigai-tools"))
            .arg("mcp")
            .args(args)
            .env("TMPDIR", tmp)
            .current_dir(env.work())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ikigai-tools mcp");
        let stdout = child.stdout.take().expect("stdout pipe");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session { child, stdin, lines }
    }

    /// A session past `initialize` and `notifications/initialized`.
    fn initialized(env: &Env) -> Session {
        Session::initialized_with(env, &[], json!({}))
    }

    /// `initialized`, the server started with `args`, the client declaring
    /// `capabilities`.
    fn initialized_with(env: &Env, args: &[&std::ffi::OsStr], capabilities: Value) -> Session {
        let mut session = Session::start_with(env, args);
        let mut params = initialize_params("2025-06-18");
        params["capabilities"] = capabilities;
        let answer = session.request(1, "initialize", params);
        assert_eq!(answer["result"]["protocolVersion"], "2025-06-18", "{answer}");
        session.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        session
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, id: i64, method: &str, params: Value) {
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
    }

    /// The next message, parsed; `None` if none comes within `wait`.
    fn next(&self, wait: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(wait).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Reads messages until the response with `id`; returns it and what came before.
    fn response(&self, id: i64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message =
                self.next(PATIENCE).unwrap_or_else(|| panic!("no response {id}; saw {before:?}"));
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(id, method, params);
        self.response(id).0
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// How the server ended; it must within [`PATIENCE`].
    fn exit_status(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server still runs");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn assert_pings(&mut self, id: i64) {
        let answer = self.request(id, "ping", json!({}));
        assert_eq!(answer, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize_params(revision: &str) -> Value {
    json!({"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}})
}

/// A bash command that writes the pids of a background `sleep 30` and of
/// its shell to `pidfile`, then waits.
fn sleeper(pidfile: &Path) -> Value {
    let file = pidfile.display();
    json!({"command": format!("sleep 30 & echo $! > {file}.tmp; echo $$ >> {file}.tmp; mv {file}.tmp {file}; wait")})
}

/// The pids `sleeper` wrote, once it has.
fn pids_of(pidfile: &Path) -> Vec<i32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(text) = std::fs::read_to_string(pidfile) {
            return text.split_whitespace().map(|p| p.parse().expect("a pid")).collect();
        }
        assert!(Instant::now() < deadline, "the command never wrote {}", pidfile.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is a live process (a zombie is dead).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().next() != Some("Z"))
        })
        .unwrap_or(false)
}

fn assert_gone_soon(pids: &[i32]) {
    let deadline = Instant::now() + PATIENCE;
    while pids.iter().any(|&pid| alive(pid)) {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

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
    let cli = env.call("file_read", json!({"file_path": "a.txt", "offset": 2}));
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text": "two\n"}], "structuredContent": cli, "isError": false})
    );
    let answer = session.call(3, "bash", json!({"command": "echo out; echo err >&2; exit 4"}));
    assert_eq!(answer["result"]["content"][0]["text"], "out\nerr\nexit_code: 4");
    let answer = session.call(4, "file_read", json!({"file_path": "missing"}));
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(answer["result"]["content"][0]["text"], "FILE_NOT_FOUND: File not found: missing");
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
    assert_gone_soon(&pids);
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
    drop(session.stdin.take());
    let status = session.exit_status();
    // rmcp's own transport waits five seconds for running calls to answer.
    assert!(closed.elapsed() < Duration::from_secs(4), "exit took {:?}", closed.elapsed());
    assert_eq!(status.code(), Some(0));
    assert_gone_soon(&pids);
}

#[test]
fn mcp_sigterm_to_the_server_ends_running_calls() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let pidfile = env.path("pids");
    session.send(2, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
    let pids = pids_of(&pidfile);
    let server = Pid::from_raw(i32::try_from(session.child.id()).expect("a pid"));
    kill(server, Signal::SIGTERM).expect("signal the server");
    let status = session.exit_status();
    assert_eq!(status.code(), Some(128 + 15));
    assert_gone_soon(&pids);
}

// --- roots (CONTRACT §7 last point, §8) ----------------------------------

/// A bash call writing `inside/f` and `outside/f`; what each file holds after.
fn write_both(session: &mut Session, id: i64, inside: &Path, outside: &Path) -> Value {
    let (i, o) = (inside.join("f"), outside.join("f"));
    let command = format!("echo in > '{}'; echo out > '{}'; true", i.display(), o.display());
    let answer = session.call(id, "bash", json!({"command": command}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer
}

fn exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
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

/// Reads the server's next message, which must be a `roots/list` request,
/// and answers it with `uris`.
fn answer_roots_list(session: &mut Session, uris: &[String]) {
    let question = session.next(PATIENCE).expect("the server asks roots/list");
    assert_eq!(question["method"], "roots/list", "{question}");
    let roots: Vec<Value> = uris.iter().map(|uri| json!({"uri": uri})).collect();
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": roots}});
    session.send_line(&answer.to_string());
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn mcp_client_roots_replace_the_command_line_ones_and_follow_list_changed() {
    let env = Env::new();
    let (a, b) = (env.mkdir("a"), env.mkdir("b"));
    let offers_roots = json!({"roots": {"listChanged": true}});
    let mut session =
        Session::initialized_with(&env, &["--root".as_ref(), b.as_ref()], offers_roots);
    answer_roots_list(&mut session, &[file_uri(&a), "https://example.com/x".to_owned()]);
    write_both(&mut session, 2, &a, &b);
    assert!(exists(&a.join("f")), "the client's root is writable");
    assert!(!exists(&b.join("f")), "the command-line root was replaced by the client's");

    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}).to_string(),
    );
    answer_roots_list(&mut session, &[file_uri(&b)]);
    std::fs::remove_file(a.join("f")).expect("remove a/f");
    write_both(&mut session, 3, &b, &a);
    assert!(exists(&b.join("f")), "the new root is writable");
    assert!(!exists(&a.join("f")), "the old root is no longer writable");

    // An empty list confines to nothing: every call is refused.
    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}).to_string(),
    );
    answer_roots_list(&mut session, &[]);
    let answer = session.call(4, "file_read", json!({"file_path": "anything"}));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "PERMISSION_DENIED: Permission denied: the MCP client's list of roots is empty, so this \
         session is confined to nothing; add a root in the client"
    );
}
