//! A client of `ikigai-tools mcp` over stdio for the tests (docs/MCP.md):
//! one server spoken to line by line (`Session`), the handshake's
//! parameters, and the helpers of the roots and cancellation tests.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::Env;

/// Long enough for any answer on a loaded machine; a hang fails, it does not stall.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// One server, spoken to line by line.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

/// The arguments of a server that serves the whole machine, on purpose:
/// without them (or `--root`) every call is refused.
pub fn unconfined() -> [&'static std::ffi::OsStr; 1] {
    [std::ffi::OsStr::new("--unconfined")]
}

impl Session {
    /// A server started `--unconfined`.
    pub fn start(env: &Env) -> Session {
        Session::start_with(env, &unconfined())
    }

    /// A server started as `ikigai-tools mcp ARGS…`. Its `TMPDIR` is `tmp/`
    /// beside `work/`: confined bash may write to the temporary directory,
    /// and the system's `/tmp` holds the fixtures that must be outside.
    pub fn start_with(env: &Env, args: &[&std::ffi::OsStr]) -> Session {
        Session::start_with_vars(env, args, &[])
    }

    /// `start_with`, the server's environment given `vars` besides.
    pub fn start_with_vars(env: &Env, args: &[&std::ffi::OsStr], vars: &[(&str, &str)]) -> Session {
        let tmp = env.mkdir("../tmp");
        let mut child = Command::new(env.link("ikigai-tools"))
            .arg("mcp")
            .args(args)
            .envs(vars.iter().copied())
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

    /// The server's pid.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid")
    }

    /// A session past `initialize` and `notifications/initialized`, the
    /// server started `--unconfined`.
    pub fn initialized(env: &Env) -> Session {
        Session::initialized_with(env, &unconfined(), json!({}))
    }

    /// `initialized`, the server started with `args`, the client declaring
    /// `capabilities`.
    pub fn initialized_with(env: &Env, args: &[&std::ffi::OsStr], capabilities: Value) -> Session {
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

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, id: i64, method: &str, params: Value) {
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
    }

    /// The next line as the server wrote it; `None` if none comes within `wait`.
    pub fn next_line(&self, wait: Duration) -> Option<String> {
        self.lines.recv_timeout(wait).ok()
    }

    /// The server's stdin, for a test that writes to it from a thread.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin still open")
    }

    /// The next message, parsed; `None` if none comes within `wait`.
    pub fn next(&self, wait: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(wait).ok()?;
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Reads messages until the response with `id`; returns it and what came before.
    pub fn response(&self, id: i64) -> (Value, Vec<Value>) {
        self.response_within(id, PATIENCE)
    }

    /// `response`, waiting at most `wait` for each message.
    pub fn response_within(&self, id: i64, wait: Duration) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let message =
                self.next(wait).unwrap_or_else(|| panic!("no response {id}; saw {before:?}"));
            if message["id"] == id && message.get("method").is_none() {
                return (message, before);
            }
            before.push(message);
        }
    }

    pub fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(id, method, params);
        self.response(id).0
    }

    pub fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// How the server ended; it must within [`PATIENCE`].
    pub fn exit_status(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "the server still runs");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes the server's stdin (how a client ends a stdio session) and
    /// waits for it to exit.
    pub fn end(&mut self) -> std::process::ExitStatus {
        self.stdin = None;
        self.exit_status()
    }

    /// A `ping` is answered: the server still reads and answers.
    pub fn assert_pings(&mut self, id: i64) {
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

pub fn initialize_params(revision: &str) -> Value {
    json!({"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}})
}

/// A bash command that writes the pids of a background `sleep 30` and of
/// its shell to `pidfile`, then waits.
pub fn sleeper(pidfile: &Path) -> Value {
    let file = pidfile.display();
    json!({"command": format!("sleep 30 & echo $! > {file}.tmp; echo $$ >> {file}.tmp; mv {file}.tmp {file}; wait")})
}

/// The pids `sleeper` wrote, once it has.
pub fn pids_of(pidfile: &Path) -> Vec<i32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(text) = std::fs::read_to_string(pidfile) {
            return text.split_whitespace().map(|p| p.parse().expect("a pid")).collect();
        }
        assert!(Instant::now() < deadline, "the command never wrote {}", pidfile.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether anything, a dangling link included, is at `path`.
pub fn exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

/// Reads the server's next message, which must be a `roots/list` request,
/// and answers it with `uris`.
pub fn answer_roots_list(session: &mut Session, uris: &[String]) {
    let question = session.next(PATIENCE).expect("the server asks roots/list");
    assert_eq!(question["method"], "roots/list", "{question}");
    let roots: Vec<Value> = uris.iter().map(|uri| json!({"uri": uri})).collect();
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": roots}});
    session.send_line(&answer.to_string());
}

pub fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}
