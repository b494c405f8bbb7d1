//! `ikigai-tools mcp --listen` (docs/MCP.md, "Over HTTP"), over raw HTTP/1.1
//! on std's TcpStream: the handshake and a call, the bearer token (refused,
//! accepted, never logged, never seen by a tool), a refusal to listen off
//! loopback without one, the Origin and Host checks against DNS rebinding,
//! the request-size bound, two sessions kept apart (roots and jobs), the
//! end of a session's calls on DELETE and of every call on SIGTERM, and the
//! access log's line.

use crate::common;
use crate::common::mcp::{file_uri, PATIENCE};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Instant;

use common::procs::{assert_gone_within, signal};
use common::*;
use serde_json::{json, Value};

/// A server listening on a port of its choosing.
pub(crate) struct Http {
    child: Child,
    /// `127.0.0.1:PORT`.
    addr: String,
    /// The lines of stderr after the first.
    log: Receiver<String>,
}

/// What came back for one request.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: a JSON body, or an SSE stream's
    /// `data:` lines.
    fn messages(&self) -> Vec<Value> {
        if let Ok(one) = serde_json::from_str::<Value>(&self.body) {
            return vec![one];
        }
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    }

    /// The one response the body holds (with an `id`).
    pub(crate) fn answer(&self) -> Value {
        let answers: Vec<Value> =
            self.messages().into_iter().filter(|m| m.get("id").is_some()).collect();
        assert_eq!(answers.len(), 1, "{self:?}");
        answers[0].clone()
    }
}

impl Http {
    pub(crate) fn start(env: &Env, args: &[&str], envs: &[(&str, &str)]) -> Http {
        let mut child = Http::command(env, args, envs).spawn().expect("spawn ikigai-tools mcp");
        let (tx, log) = mpsc::channel();
        let stderr = child.stderr.take().expect("stderr pipe");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let first = log.recv_timeout(PATIENCE).expect("the server says where it listens");
        let addr = first
            .strip_prefix("ikigai-tools mcp: listening on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("first line: {first}"))
            .to_owned();
        Http { child, addr, log }
    }

    fn command(env: &Env, args: &[&str], envs: &[(&str, &str)]) -> Command {
        let tmp = env.path("../tmp");
        std::fs::create_dir_all(&tmp).expect("mkdir tmp");
        let mut command = Command::new(env.link("ikigai-tools"));
        command
            .arg("mcp")
            .args(args)
            .env("TMPDIR", tmp)
            .env_remove("IKIGAI_TOOLS_MCP_TOKEN")
            .envs(envs.iter().copied())
            .current_dir(env.work())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    /// Sends one request on a connection of its own and reads the answer
    /// to its end.
    pub(crate) fn send(&self, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        send_to(&self.addr, method, headers, body)
    }

    pub(crate) fn post(&self, session: Option<&str>, message: &Value) -> Reply {
        let headers: Vec<(&str, &str)> =
            session.map(|s| ("Mcp-Session-Id", s)).into_iter().collect();
        self.send("POST", &headers, &message.to_string())
    }

    /// A session past `initialize` (the client declaring `capabilities`)
    /// and `notifications/initialized`: its id.
    pub(crate) fn session(&self, capabilities: Value) -> String {
        let reply = self.post(None, &initialize(capabilities));
        assert_eq!(reply.status, 200, "{reply:?}");
        let id = reply.header("mcp-session-id").expect("a session id").to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(&id), &initialized).status, 202);
        id
    }

    pub(crate) fn call(&self, session: &str, id: u64, tool: &str, arguments: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let reply = self.post(Some(session), &request);
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.answer()
    }

    /// SIGTERM, then the exit status and every line of stderr after the first.
    fn stop(mut self) -> (std::process::ExitStatus, Vec<String>) {
        signal(&self.child, libc::SIGTERM);
        let status = wait_within(&mut self.child);
        (status, self.log.try_iter().collect())
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child`, at most PATIENCE.
fn wait_within(child: &mut Child) -> std::process::ExitStatus {
    let status = wait_or_kill(child);
    assert!(status.signal() != Some(libc::SIGKILL), "the server did not exit");
    status
}

/// Waits for `child` at most PATIENCE, then kills it.
fn wait_or_kill(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub(crate) fn initialize(capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "tests", "version": "0"}}})
}

/// Sends one request to `addr` on a connection of its own and reads the
/// answer to its end.
fn send_to(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("write head");
    stream.write_all(body.as_bytes()).expect("write body");
    read_reply(&mut stream)
}

/// Reads an HTTP/1.1 answer to the end of the connection; a chunked body
/// is put back together.
fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a whole head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Reply {
        status: status.expect("a status"),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap_or("0").trim(), 16)
                .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        body.extend_from_slice(&raw[start..(start + size).min(raw.len())]);
        raw = &raw[(start + size + 2).min(raw.len())..];
    }
    body
}

/// A stream of server messages outside any request (GET /mcp): the
/// messages, as they come.
pub(crate) fn listen_stream(http: &Http, session: &str) -> Receiver<Value> {
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n",
        http.addr
    );
    stream.write_all(head.as_bytes()).expect("write");
    sse_messages(stream)
}

/// The JSON-RPC messages of an SSE answer read from `stream`, as they come.
fn sse_messages(stream: TcpStream) -> Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let Some(data) = line.strip_prefix("data: ") else { continue };
            let Ok(message) = serde_json::from_str::<Value>(data) else { continue };
            if tx.send(message).is_err() {
                break;
            }
        }
    });
    rx
}

/// A session whose client declares roots and answers `roots/list` with
/// `root`.
fn session_with_root(http: &Http, root: &Path) -> String {
    let reply = http.post(None, &initialize(json!({"roots": {"listChanged": true}})));
    let session = reply.header("mcp-session-id").expect("a session id").to_owned();
    let server_messages = listen_stream(http, &session);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(http.post(Some(&session), &initialized).status, 202);
    let question = server_messages.recv_timeout(PATIENCE).expect("the server asks roots/list");
    assert_eq!(question["method"], "roots/list", "{question}");
    let answer = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"roots": [{"uri": file_uri(root)}]}});
    assert_eq!(http.post(Some(&session), &answer).status, 202);
    session
}

fn tool_names(reply: &Reply) -> Vec<String> {
    let answer = reply.answer();
    let tools = answer["result"]["tools"].as_array().expect("tools").clone();
    tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_owned()).collect()
}

#[test]
fn mcp_http_initialize_tools_list_and_tools_call() {
    let env = Env::new();
    let http = Http::start(&env, &["--unconfined", "--listen", "0", "--profile", "seed"], &[]);
    let session = http.session(json!({}));
    let list =
        http.post(Some(&session), &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(tool_names(&list), ["bash", "file_read", "file_write", "file_edit", "glob", "grep"]);
    let answer = http.call(&session, 3, "bash", json!({"command": "echo over http"}));
    assert_eq!(answer["id"], 3);
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"output": "over http", "exit_code": 0})
    );
    let (status, _) = http.stop();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn mcp_http_token_is_required_when_given_and_never_logged_nor_seen_by_a_tool() {
    let env = Env::new();
    let secret = "tok-3f9a1c7e5d";
    let http = Http::start(
        &env,
        &["--unconfined", "--listen", "127.0.0.1:0"],
        &[("IKIGAI_TOOLS_MCP_TOKEN", secret)],
    );
    for authorization in [None, Some("Bearer wrong"), Some("Basic dG9rOnRvaw==")] {
        let headers: Vec<(&str, &str)> =
            authorization.map(|a| ("Authorization", a)).into_iter().collect();
        let reply = http.send("POST", &headers, &initialize(json!({})).to_string());
        assert_eq!(reply.status, 401, "{authorization:?}: {reply:?}");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer realm=\"ikigai-tools mcp\""));
    }
    let bearer = format!("Bearer {secret}");
    let with_token = |session: Option<&str>, message: &Value| {
        let mut headers = vec![("Authorization", bearer.as_str())];
        headers.extend(session.map(|s| ("Mcp-Session-Id", s)));
        http.send("POST", &headers, &message.to_string())
    };
    let reply = with_token(None, &initialize(json!({})));
    assert_eq!(reply.status, 200, "{reply:?}");
    let session = reply.header("mcp-session-id").expect("a session").to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(with_token(Some(&session), &initialized).status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bash",
        "arguments": {"command": "echo \"[${IKIGAI_TOOLS_MCP_TOKEN-unset}]\""}}});
    let answer = with_token(Some(&session), &call).answer();
    assert_eq!(answer["result"]["structuredContent"]["output"], "[unset]", "{answer}");
    let (status, log) = http.stop();
    assert_eq!(status.code(), Some(0));
    assert!(log.len() >= 5, "{log:?}");
    assert!(log.iter().all(|line| !line.contains(secret)), "{log:?}");
}

#[test]
fn mcp_http_token_file_must_not_be_readable_by_others() {
    let env = Env::new();
    let file = env.write("token", "tok-from-file\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let path = file.to_str().expect("utf-8");
    let out =
        Http::command(&env, &["--listen", "0", "--token-file", path], &[]).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "ikigai-tools mcp: cannot start: --token-file {path}: readable by every user \
             (mode 644): chmod o-r it\n"
        )
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let http = Http::start(&env, &["--listen", "0", "--token-file", path], &[]);
    let body = initialize(json!({})).to_string();
    assert_eq!(http.send("POST", &[], &body).status, 401);
    let ok = http.send("POST", &[("Authorization", "Bearer tok-from-file")], &body);
    assert_eq!(ok.status, 200, "{ok:?}");
}

#[test]
fn mcp_http_off_loopback_without_a_token_refuses_to_start() {
    let env = Env::new();
    let mut child = Http::command(&env, &["--listen", "0.0.0.0:0"], &[]).spawn().expect("run");
    // A server that listens instead is stopped (and fails the test) rather than waited for.
    let status = wait_or_kill(&mut child);
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("read");
    let out = std::process::Output { status, stdout: Vec::new(), stderr: stderr.into_bytes() };
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ikigai-tools mcp: refusing to listen on 0.0.0.0:0 without a token: other machines can \
         reach it. Put a token in a file only you can read and pass --token-file FILE, or set \
         IKIGAI_TOOLS_MCP_TOKEN; clients send it as `Authorization: Bearer TOKEN`\n"
    );
}

#[test]
fn mcp_http_foreign_origin_or_host_is_403() {
    let env = Env::new();
    let http =
        Http::start(&env, &["--listen", "0", "--allow-origin", "https://app.example:443"], &[]);
    let body = initialize(json!({})).to_string();
    let port = http.addr.rsplit(':').next().expect("port").to_owned();
    for origin in
        ["http://evil.example", "http://evil.example:80", "null", "https://app.example:444"]
    {
        let reply = http.send("POST", &[("Origin", origin)], &body);
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
    }
    let local = format!("http://localhost:{port}");
    for origin in [local.as_str(), "http://127.0.0.1:5173", "https://app.example"] {
        let reply = http.send("POST", &[("Origin", origin)], &body);
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
    }
    // A rebound name reaches the server with its own Host.
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example:{port}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write");
    assert_eq!(read_reply(&mut stream).status, 403);
}

#[test]
fn mcp_http_request_over_64_mib_is_413() {
    let env = Env::new();
    let http = Http::start(&env, &["--listen", "0"], &[]);
    // Declared: refused before a byte of the body is read.
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        http.addr,
        (64 << 20) + 1
    );
    stream.write_all(head.as_bytes()).expect("write");
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 413, "{reply:?}");
    assert_eq!(reply.body, "Payload Too Large: a request is at most 67108864 bytes");
    // Chunked, no length declared: refused once the bound is passed.
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        http.addr
    );
    stream.write_all(head.as_bytes()).expect("write");
    let mut writer = stream.try_clone().expect("clone");
    let sender = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 20];
        let framed =
            [format!("{:x}\r\n", chunk.len()).into_bytes(), chunk, b"\r\n".to_vec()].concat();
        for _ in 0..65 {
            if writer.write_all(&framed).is_err() {
                break;
            }
        }
    });
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 413, "{reply:?}");
    sender.join().expect("sender");
    // The server serves on.
    assert_eq!(http.post(None, &initialize(json!({}))).status, 200);
}

#[test]
fn mcp_http_two_sessions_keep_their_roots_and_jobs_apart() {
    let env = Env::new();
    let a = env.mkdir("a");
    let b = env.mkdir("b");
    let http = Http::start(&env, &["--listen", "0", "--profile", "full"], &[]);
    let in_a = session_with_root(&http, &a);
    let in_b = session_with_root(&http, &b);
    let write = |session: &str, dir: &Path| {
        let path = dir.join("note.txt");
        http.call(session, 5, "file_write", json!({"file_path": path, "content": "x"}))
    };
    assert_eq!(write(&in_a, &a)["result"]["isError"], false);
    assert_eq!(write(&in_b, &b)["result"]["isError"], false);
    for (session, other) in [(&in_a, &b), (&in_b, &a)] {
        let refused = write(session, other);
        assert_eq!(
            refused["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED",
            "{refused}"
        );
    }
    let job = http.call(
        &in_a,
        6,
        "bash",
        json!({"command": format!("cd {} && sleep 30", a.display()), "run_in_background": true}),
    );
    assert_eq!(job["result"]["isError"], false, "{job}");
    let jobs_of = |session: &str| {
        let listed = http.call(session, 7, "job_list", json!({}));
        listed["result"]["structuredContent"]["jobs"].as_array().expect("jobs").len()
    };
    assert_eq!(jobs_of(&in_a), 1);
    assert_eq!(jobs_of(&in_b), 0);
    let (status, _) = http.stop();
    assert_eq!(status.code(), Some(0));
}

/// Starts `sleeper` in `session` on a thread of its own (the answer comes
/// only when the call ends); the pids of its shell and its sleep.
fn start_sleeper(http: &Http, session: &str, env: &Env) -> Vec<i32> {
    let pidfile = env.path("pids");
    let file = pidfile.display();
    let command = format!(
        "sleep 30 & echo $! > {file}.tmp; echo $$ >> {file}.tmp; mv {file}.tmp {file}; wait"
    );
    let request = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": command}}});
    let (addr, session) = (http.addr.clone(), session.to_owned());
    std::thread::spawn(move || {
        let Ok(mut stream) = TcpStream::connect(&addr) else { return };
        let body = request.to_string();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.read_to_end(&mut Vec::new());
    });
    let deadline = Instant::now() + PATIENCE;
    while !pidfile.exists() {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&pidfile).expect("pids");
    text.lines().map(|l| l.trim().parse().expect("a pid")).collect()
}

/// Starts a job (`run_in_background`) of a `sleep 30` in `session`: the
/// sleep's pid.
fn start_job(http: &Http, session: &str, env: &Env) -> i32 {
    let jobfile = env.path("job-pid");
    let command = format!("sleep 30 & echo $! > {}; wait", jobfile.display());
    let job = http.call(session, 2, "bash", json!({"command": command, "run_in_background": true}));
    assert_eq!(job["result"]["isError"], false, "{job}");
    let deadline = Instant::now() + PATIENCE;
    loop {
        let pid = std::fs::read_to_string(&jobfile).ok().and_then(|t| t.trim().parse().ok());
        if let Some(pid) = pid {
            return pid;
        }
        assert!(Instant::now() < deadline, "the job never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn mcp_http_delete_ends_the_sessions_calls_and_jobs() {
    let env = Env::new();
    let http = Http::start(&env, &["--unconfined", "--listen", "0"], &[]);
    let session = http.session(json!({}));
    let mut pids = start_sleeper(&http, &session, &env);
    pids.push(start_job(&http, &session, &env));
    let reply = http.send("DELETE", &[("Mcp-Session-Id", &session)], "");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_gone_within(&pids, PATIENCE);
    let after = http.post(Some(&session), &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(after.status, 404, "{after:?}");
}

#[test]
fn mcp_http_sigterm_stops_every_call_and_job_and_exits_0() {
    let env = Env::new();
    let http = Http::start(&env, &["--unconfined", "--listen", "0"], &[]);
    let session = http.session(json!({}));
    let mut pids = start_sleeper(&http, &session, &env);
    pids.push(start_job(&http, &session, &env));
    let (status, log) = http.stop();
    assert_eq!(status.code(), Some(0), "{log:?}");
    assert_gone_within(&pids, PATIENCE);
    assert!(
        log.contains(
            &"ikigai-tools mcp: stopping (signal 15): ending every session's calls".to_owned()
        ),
        "{log:?}"
    );
}

#[test]
fn mcp_http_access_log_has_one_line_per_request() {
    let env = Env::new();
    let http = Http::start(&env, &["--listen", "0"], &[]);
    let session = http.session(json!({}));
    let ping = http.post(Some(&session), &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(ping.status, 200);
    assert_eq!(http.send("GET", &[], "").status, 400);
    let (_, log) = http.stop();
    let requests: Vec<&String> = log.iter().filter(|l| l.contains(" /mcp ")).collect();
    assert_eq!(requests.len(), 4, "{log:?}");
    // ikigai-tools mcp: TIME PEER METHOD PATH session=ID STATUS BYTESB MSms RPC,
    // the time in HTTP's format (`Thu, 26 Nov 2026 08:48:50 GMT`, 6 words).
    let shape = |line: &str| -> Vec<String> {
        let rest = line.strip_prefix("ikigai-tools mcp: ").expect("the prefix");
        let words: Vec<&str> = rest.split(' ').collect();
        assert_eq!(words.len(), 14, "{line}");
        assert_eq!(words[5], "GMT", "{line}");
        assert!(words[6].starts_with("127.0.0.1:"), "{line}");
        assert!(words[11].strip_suffix('B').is_some_and(|n| n.parse::<u64>().is_ok()), "{line}");
        assert!(words[12].strip_suffix("ms").is_some_and(|n| n.parse::<u64>().is_ok()), "{line}");
        [words[7], words[8], words[9], words[10], words[13]].map(str::to_owned).to_vec()
    };
    let short = &session[..8];
    let seen: Vec<Vec<String>> = requests.iter().map(|l| shape(l)).collect();
    let expect = |m: &str, s: &str, status: &str, rpc: &str| {
        [m, "/mcp", &format!("session={s}"), status, rpc].map(str::to_owned).to_vec()
    };
    assert_eq!(seen[0], expect("POST", short, "200", "initialize"));
    assert_eq!(seen[1], expect("POST", short, "202", "notifications/initialized"));
    assert_eq!(seen[2], expect("POST", short, "200", "ping"));
    assert_eq!(seen[3], expect("GET", "-", "400", "-"));
}

#[test]
fn mcp_http_off_loopback_any_host_name_is_served_with_the_token() {
    let env = Env::new();
    let secret = "tok-8c2e4b";
    let http = Http::start(&env, &["--listen", "0.0.0.0:0"], &[("IKIGAI_TOOLS_MCP_TOKEN", secret)]);
    assert!(http.addr.starts_with("0.0.0.0:"), "{}", http.addr);
    let port = http.addr.rsplit(':').next().expect("port").to_owned();
    let body = initialize(json!({})).to_string();
    let request = |authorization: &str| {
        let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: workspace.example:{port}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Authorization: {authorization}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(head.as_bytes()).expect("write");
        read_reply(&mut stream).status
    };
    // The name a remote host uses is not known here: the token guards.
    assert_eq!(request(&format!("Bearer {secret}")), 200);
    assert_eq!(request("Bearer guess"), 401);
}

/// A client that opens a connection and never finishes its headers (a
/// slowloris) is cut off after the server's header wait (5 s), rather than
/// holding the connection, and the server serves on.
#[test]
fn mcp_http_a_connection_that_never_finishes_its_headers_is_closed() {
    let env = Env::new();
    let http = Http::start(&env, &["--listen", "0"], &[]);
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").expect("write a part");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let mut rest = Vec::new();
    // Closed by the server (end of file, perhaps after a 408), not by the
    // read timeout, which would be an error here.
    stream.read_to_end(&mut rest).expect("the server closes the connection");
    let reply = String::from_utf8_lossy(&rest);
    assert!(reply.is_empty() || reply.starts_with("HTTP/1.1 408"), "{reply}");
    let session = http.session(json!({}));
    assert!(!session.is_empty());
}

/// `initialize` carrying only the stateless revision's `_meta` is a method
/// that revision does not have: 404 and -32601, as the conformance suite's
/// `sep-2575-http-server-method-not-found-404-initialize` expects (it was
/// -32602, "malformed params").
#[test]
fn mcp_http_initialize_with_only_stateless_metadata_is_404_method_not_found() {
    let env = Env::new();
    let http = Http::start(&env, &["--listen", "0"], &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let request =
        json!({"jsonrpc": "2.0", "id": 500, "method": "initialize", "params": {"_meta": meta}});
    let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "initialize")];
    let reply = http.send("POST", &headers, &request.to_string());
    assert_eq!(reply.status, 404, "{reply:?}");
    assert_eq!(
        reply.answer(),
        json!({"jsonrpc": "2.0", "id": 500, "error": {"code": -32601, "message":
            "Method not found: initialize (revision 2026-07-28 has none; use server/discover)"}})
    );
}

/// The knob that shortens the server's bounds for a test (docs/MCP.md,
/// "Over HTTP", "Bounds").
const LIMITS: &str = "IKIGAI_TOOLS_MCP_HTTP_LIMITS";

/// A connection with `head` sent (a request's line and headers, the blank
/// line included), reading with `patience`.
fn open_with(http: &Http, head: &str, patience: std::time::Duration) -> TcpStream {
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    stream.set_read_timeout(Some(patience)).expect("timeout");
    stream.write_all(head.as_bytes()).expect("write the head");
    stream
}

/// A POST's head declaring `length` bytes of body.
fn post_head(http: &Http, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n",
        http.addr
    )
}

/// The lines of stderr that came within `patience`, until one satisfies `done`.
fn log_until(
    http: &Http,
    patience: std::time::Duration,
    done: impl Fn(&str) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + patience;
    let mut lines = Vec::new();
    while let Ok(line) = http.log.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let over = done(&line);
        lines.push(line);
        if over {
            break;
        }
    }
    lines
}

/// A server on a free loopback port confined to a new directory `root`,
/// with `envs` in its environment (the bounds' test knob among them).
fn confined_http(env: &Env, envs: &[(&str, &str)]) -> Http {
    let root = env.mkdir("root");
    let args = ["--listen", "0", "--root", root.to_str().expect("utf-8")];
    Http::start(env, &args, envs)
}

/// A break found by attack: hyper bounds only the headers' time; a body trickled a byte
/// every few seconds held its connection (and what it had sent) forever.
/// The whole body must arrive within the body bound (60 s; 1 s here).
#[test]
fn a_trickled_body_is_cut_off_after_the_body_time_limit() {
    let env = Env::new();
    let http = confined_http(&env, &[(LIMITS, "body=1")]);
    // Without the bound nothing comes back: the read times out (4 s).
    let mut stream = open_with(&http, &post_head(&http, 1000), std::time::Duration::from_secs(4));
    let mut writer = stream.try_clone().expect("clone");
    let trickle = std::thread::spawn(move || {
        for _ in 0..20 {
            if writer.write_all(b" ").is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    });
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert_eq!(
        reply.body,
        "Request Timeout: a request's body must arrive whole within 1 s of its headers"
    );
    assert_eq!(reply.header("connection"), Some("close"));
    trickle.join().expect("trickle");
    // The server serves on.
    assert_eq!(http.post(None, &initialize(json!({}))).status, 200);
}

/// A break found by attack: any number of connections were taken and held. Past the bound
/// (256; 3 here) a new one is answered 503 at once and closed, and stderr
/// says so; once one closes, a new one is served.
#[test]
fn connections_beyond_the_bound_are_refused() {
    let env = Env::new();
    let http = confined_http(&env, &[(LIMITS, "connections=3")]);
    // Three connections that have sent nothing yet (the header wait, 5 s,
    // is longer than this test).
    let held: Vec<TcpStream> =
        (0..3).map(|_| TcpStream::connect(&http.addr).expect("connect")).collect();
    // Without the bound the fourth is taken, and waits for a request: the
    // read times out.
    let mut fourth = TcpStream::connect(&http.addr).expect("connect");
    fourth.set_read_timeout(Some(std::time::Duration::from_secs(3))).expect("timeout");
    let reply = read_reply(&mut fourth);
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(
        reply.body,
        "Service Unavailable: 3 connections are open, the most this server takes; retry once \
         one closes"
    );
    let said = log_until(&http, PATIENCE, |line| line.contains("refused a connection"));
    let line = said.last().expect("a line");
    assert!(
        line.starts_with("ikigai-tools mcp: refused a connection from 127.0.0.1:")
            && line.ends_with(": 3 connections are open, the most (503)"),
        "{said:?}"
    );
    drop(held);
    // The server notices the closed ones as it polls them: a moment, during
    // which a request may still be refused (503, or reset once sent).
    let body = initialize(json!({})).to_string();
    let deadline = Instant::now() + PATIENCE;
    loop {
        let mut stream = open_with(&http, &post_head(&http, body.len()), PATIENCE);
        let _ = stream.write_all(body.as_bytes());
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        if raw.starts_with(b"HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "never served again");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A break found by attack: the bodies being read were bounded each (64 MiB), not together:
/// 8 stalled 60 MiB bodies held 490 MB. Bytes of bodies are counted as
/// they arrive against one budget (256 MiB; 100,000 bytes here): a request
/// that would pass it is answered 503 with Retry-After, never allocated.
#[test]
fn bodies_beyond_the_byte_budget_are_refused() {
    let env = Env::new();
    let http = confined_http(&env, &[(LIMITS, "budget=100000")]);
    // A body of 90,000 bytes stalled after 80,000.
    let mut stalled = open_with(&http, &post_head(&http, 90_000), PATIENCE);
    stalled.write_all(&[b' '; 80_000]).expect("write");
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping", "pad": "x".repeat(30_000)});
    // The server reads the stalled body as it comes: once it has, 80,000
    // bytes are held and 30,000 more do not fit.
    let deadline = Instant::now() + PATIENCE;
    let reply = loop {
        let reply = http.post(None, &ping);
        if reply.status == 503 || Instant::now() > deadline {
            break reply;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(
        reply.body,
        "Service Unavailable: the requests being answered hold 100000 bytes, the most this \
         server holds at once; retry in a moment"
    );
    // The stalled body's bytes are given back when its connection goes.
    drop(stalled);
    let deadline = Instant::now() + PATIENCE;
    while http.post(None, &ping).status == 503 {
        assert!(Instant::now() < deadline, "the budget was never given back");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A break found by attack: `remove_var` took the token out of libc's array only, not out
/// of the block the kernel gave the process, which /proc/PID/environ shows
/// and the spawner (forked, not exec'd) inherits: an unconfined bash read
/// it in /proc/$PPID/environ. No process from the server down to the call
/// shows it.
#[test]
fn the_token_is_not_in_any_procs_environ() {
    let env = Env::new();
    let secret = "tok-5e6f7a8b9c";
    // A confined bash may not read its ancestors' /proc entries (Landlock):
    // the break is an unconfined one's.
    let args = ["--listen", "0", "--unconfined"];
    let http = Http::start(&env, &args, &[("IKIGAI_TOOLS_MCP_TOKEN", secret)]);
    let server = http.child.id();
    let bearer = format!("Bearer {secret}");
    let send = |session: Option<&str>, message: &Value| {
        let mut headers = vec![("Authorization", bearer.as_str())];
        headers.extend(session.map(|s| ("Mcp-Session-Id", s)));
        http.send("POST", &headers, &message.to_string())
    };
    let reply = send(None, &initialize(json!({})));
    let session = reply.header("mcp-session-id").expect("a session").to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(Some(&session), &initialized).status, 202);
    // Every process from the call's shell up to the server: how many
    // environments were read, and which hold the secret.
    let command = format!(
        "p=$$; read=0; while :; do \
           if tr '\\0' '\\n' < /proc/$p/environ > /tmp/env.$$ 2>/dev/null; then \
             read=$((read+1)); grep -q {secret} /tmp/env.$$ && echo \"found in $p\"; fi; \
           [ $p = {server} ] && break; \
           p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2); [ $p -gt 1 ] || break; \
         done; rm -f /tmp/env.$$; echo \"read $read\""
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": command}}});
    let answer = send(Some(&session), &call).answer();
    let output = answer["result"]["structuredContent"]["output"].as_str().unwrap_or_default();
    // The shell, its parents (the tool, the spawner) and the server.
    let read: usize = output
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("read "))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(read >= 3 && !output.contains("found"), "{answer}");
    // And as seen from outside: the server and every process under it.
    let mut pids = vec![server];
    let mut at = 0;
    while at < pids.len() {
        let children = std::fs::read_dir(format!("/proc/{}/task", pids[at]))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|text| {
                text.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>()
            })
            .collect::<Vec<u32>>();
        pids.extend(children);
        at += 1;
    }
    assert!(pids.len() >= 2, "the server and its spawner: {pids:?}");
    for pid in pids {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let shown = String::from_utf8_lossy(&environ);
        assert!(!shown.contains(secret), "/proc/{pid}/environ holds the token");
        assert!(!shown.contains("IKIGAI_TOOLS_MCP_TOKEN"), "/proc/{pid}/environ names it");
    }
}

/// The number of job namespaces in `state` (a directory each).
fn namespaces(state: &Path) -> usize {
    std::fs::read_dir(state).map_or(0, |entries| entries.flatten().count())
}

/// A break found by attack: rmcp ended a session idle for 300 s even while a job (or a
/// call) of it ran, and the job with it; the docs promise a job lives
/// until job_kill or its time to live. A session with a running job, or a
/// running call, is kept (the idle bound is 0.5 s here).
#[test]
fn an_idle_session_with_a_running_job_is_kept() {
    let env = Env::new();
    let state = env.path("state");
    let envs = [(LIMITS, "idle=0.5"), ("IKIGAI_TOOLS_STATE_DIR", state.to_str().expect("utf-8"))];
    let http = confined_http(&env, &envs);
    let idle = http.session(json!({}));
    let busy = http.session(json!({}));
    let job =
        http.call(&busy, 2, "bash", json!({"command": "sleep 30", "run_in_background": true}));
    assert_eq!(job["result"]["isError"], false, "{job}");
    // A call of 2 s, four times the idle bound, answers whole.
    let call = http.call(&busy, 3, "bash", json!({"command": "sleep 2; echo kept"}));
    assert_eq!(
        call["result"]["structuredContent"],
        json!({"output": "kept", "exit_code": 0}),
        "{call}"
    );
    // The idle one expires meanwhile, so expiry has run; a little more.
    let short = &idle[..8];
    let said =
        log_until(&http, PATIENCE, |line| line.contains(&format!("session {short} expired")));
    assert!(said.last().is_some_and(|l| l.contains("expired")), "{said:?}");
    std::thread::sleep(std::time::Duration::from_secs(1));
    let listed = http.call(&busy, 4, "job_list", json!({}));
    let jobs = &listed["result"]["structuredContent"]["jobs"];
    assert_eq!(jobs.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(jobs[0]["state"], "running", "{listed}");
    let (_, log) = http.stop();
    let busy_short = &busy[..8];
    assert!(log.iter().all(|l| !l.contains(&format!("session {busy_short} expired"))), "{log:?}");
}

/// The other half of that break: a session idle for the bound (300 s; 0.5 s here),
/// with no request open and no call or job running, expires: its next
/// request is 404, and its ended jobs are removed with it.
#[test]
fn an_idle_session_without_calls_or_jobs_expires_with_its_ended_jobs() {
    let env = Env::new();
    let state = env.path("state");
    let envs = [(LIMITS, "idle=0.5"), ("IKIGAI_TOOLS_STATE_DIR", state.to_str().expect("utf-8"))];
    let http = confined_http(&env, &envs);
    let session = http.session(json!({}));
    let job = http.call(&session, 2, "bash", json!({"command": "true", "run_in_background": true}));
    assert_eq!(job["result"]["isError"], false, "{job}");
    assert_eq!(namespaces(&state), 1);
    let short = &session[..8];
    let said = log_until(&http, PATIENCE, |line| line.contains("expired"));
    assert_eq!(
        said.last().map(String::as_str),
        Some(
            format!(
                "ikigai-tools mcp: session {short} expired: no request for 0.5 s, no call or job \
                 running"
            )
            .as_str()
        ),
        "{said:?}"
    );
    let ping = http.post(Some(&session), &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(ping.status, 404, "{ping:?}");
    let deadline = Instant::now() + PATIENCE;
    while namespaces(&state) > 0 {
        assert!(Instant::now() < deadline, "the session's jobs were not removed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A break found by attack: 20,000 `initialize` took 1.18 GB. Past the bound (1024; 2
/// here) `initialize` is answered 503 with a JSON-RPC error that says the
/// server is full and how to end a session; once one is deleted, a new
/// one is made.
#[test]
fn sessions_beyond_the_bound_are_refused() {
    let env = Env::new();
    let http = confined_http(&env, &[(LIMITS, "sessions=2")]);
    let first = http.session(json!({}));
    let _second = http.session(json!({}));
    let refused = http.post(None, &initialize(json!({})));
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("mcp-session-id"), None);
    assert_eq!(
        serde_json::from_str::<Value>(&refused.body).expect("JSON"),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message":
            "The server is full: 2 sessions are open, the most it takes. End a session you no \
             longer use with DELETE /mcp (its Mcp-Session-Id header), or retry once one idle \
             for 300 s has expired."}})
    );
    // A session's own requests are served as before.
    let ping = http.post(Some(&first), &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(ping.status, 200, "{ping:?}");
    let deleted = http.send("DELETE", &[("Mcp-Session-Id", &first)], "");
    assert_eq!(deleted.status, 200, "{deleted:?}");
    assert_eq!(http.post(None, &initialize(json!({}))).status, 200);
}

/// A break found by attack: the access log copied each JSON-RPC method whole (and
/// escaped, up to five times longer): a 10 MB method wrote a 50 MB line.
/// What a line copies from the request is bounded, a cut marked.
#[test]
fn a_huge_method_name_makes_a_short_access_log_line() {
    let env = Env::new();
    let http = confined_http(&env, &[]);
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "\u{1}".repeat(1 << 20)});
    http.post(None, &huge);
    let batch: Vec<Value> =
        (0..1000).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect();
    http.post(None, &Value::Array(batch));
    http.send(&"X".repeat(5000), &[], "");
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let head = format!(
        "GET /{} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        "p".repeat(5000),
        http.addr
    );
    stream.write_all(head.as_bytes()).expect("write");
    assert_eq!(read_reply(&mut stream).status, 404);
    let (_, log) = http.stop();
    let requests: Vec<&String> = log.iter().filter(|l| l.contains(" session=")).collect();
    assert_eq!(requests.len(), 4, "{log:?}");
    for line in &requests {
        assert!(line.len() <= 400, "a line of {} bytes: {}…", line.len(), &line[..400]);
    }
    let cut = format!("{}…", "\\u{1}".repeat(9));
    assert!(requests[0].ends_with(&cut), "{}", requests[0]);
    assert!(requests[1].ends_with(" ping,ping,ping,ping,+996"), "{}", requests[1]);
    assert!(requests[2].contains(&format!(" {}… /mcp ", "X".repeat(16))), "{}", requests[2]);
    assert!(requests[3].contains(&format!(" GET /{}… ", "p".repeat(99))), "{}", requests[3]);
}

/// A break found by attack: the token file was opened blocking: a FIFO held the start
/// forever (until a writer came). It is opened without blocking and must
/// be a regular file: one line, exit 2, at once.
#[test]
fn a_token_file_that_is_a_fifo_is_refused_at_once() {
    let env = Env::new();
    let fifo = env.path("token");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
    let path = fifo.to_str().expect("utf-8");
    let mut child =
        Http::command(&env, &["--listen", "0", "--token-file", path], &[]).spawn().expect("run");
    // Without the fix the server waits on the FIFO until killed (PATIENCE).
    let status = wait_or_kill(&mut child);
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("read");
    assert_eq!(status.code(), Some(2), "{status:?} {stderr}");
    assert_eq!(
        stderr,
        format!(
            "ikigai-tools mcp: cannot start: --token-file {path}: not a regular file (a FIFO)\n"
        )
    );
    // A link to a good token file is refused too (its final component is
    // never followed), and so is a file longer than a token.
    let good = env.write("good", "tok-from-file\n");
    std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = env.path("link");
    std::os::unix::fs::symlink(&good, &link).expect("symlink");
    let big = env.write("big", "t".repeat(5000));
    std::fs::set_permissions(&big, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    for (file, why) in [
        (&link, "a symbolic link: name the file itself"),
        (&big, "longer than 4096 bytes: a token is one line"),
    ] {
        let file = file.to_str().expect("utf-8");
        let out = Http::command(&env, &["--listen", "0", "--token-file", file], &[])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("ikigai-tools mcp: cannot start: --token-file {file}: {why}\n")
        );
    }
}

/// A request for `path` with no body and no token, on a connection of its own.
fn probe(http: &Http, method: &str, path: &str) -> Reply {
    let head =
        format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", http.addr);
    read_reply(&mut open_with(http, &head, PATIENCE))
}

/// An orchestrator's probes (docs/MCP.md, "Health and readiness") need no
/// token even where /mcp does, say nothing but their status, take only
/// GET and HEAD, and are logged as every request is.
#[test]
fn health_and_readiness_answer_without_the_token_and_say_only_their_status() {
    let env = Env::new();
    let state = env.path("state");
    let http = Http::start(
        &env,
        &["--unconfined", "--listen", "127.0.0.1:0"],
        &[
            ("IKIGAI_TOOLS_MCP_TOKEN", "tok-health"),
            ("IKIGAI_TOOLS_STATE_DIR", state.to_str().expect("utf-8")),
        ],
    );
    assert_eq!(http.send("POST", &[], &initialize(json!({})).to_string()).status, 401);
    let healthz = probe(&http, "GET", "/healthz");
    assert_eq!((healthz.status, healthz.body.as_str()), (200, "ok\n"), "{healthz:?}");
    let readyz = probe(&http, "GET", "/readyz");
    assert_eq!((readyz.status, readyz.body.as_str()), (200, "ready\n"), "{readyz:?}");
    let head = probe(&http, "HEAD", "/readyz");
    assert_eq!((head.status, head.body.as_str()), (200, ""), "{head:?}");
    for path in ["/healthz", "/readyz"] {
        let post = probe(&http, "POST", path);
        assert_eq!(post.status, 405, "{post:?}");
        assert_eq!(post.header("allow"), Some("GET, HEAD"), "{post:?}");
    }
    let (_, log) = http.stop();
    let probes: Vec<&String> =
        log.iter().filter(|l| l.contains(" /healthz ") || l.contains(" /readyz ")).collect();
    assert_eq!(probes.len(), 5, "{log:?}");
    assert!(probes[0].contains(" GET /healthz session=- 200 "), "{probes:?}");
    assert!(probes[4].contains(" POST /readyz session=- 405 "), "{probes:?}");
}

/// Not ready while the job state directory would be refused to a call (a
/// file; a directory open to others): 503 and the one word `state`, no path.
#[test]
fn readyz_is_503_state_while_the_job_state_directory_is_unusable() {
    let env = Env::new();
    let file = env.write("state-file", "");
    let open = env.mkdir("state-open");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    for state in [&file, &open] {
        let dir = ("IKIGAI_TOOLS_STATE_DIR", state.to_str().expect("utf-8"));
        let http = Http::start(&env, &["--listen", "0"], &[dir]);
        let readyz = probe(&http, "GET", "/readyz");
        assert_eq!(
            (readyz.status, readyz.body.as_str()),
            (503, "state\n"),
            "{state:?}: {readyz:?}"
        );
        assert_eq!(probe(&http, "GET", "/healthz").status, 200);
    }
    // Fixed, it is ready again without a restart.
    let http = Http::start(
        &env,
        &["--listen", "0"],
        &[("IKIGAI_TOOLS_STATE_DIR", open.to_str().expect("utf-8"))],
    );
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    assert_eq!(probe(&http, "GET", "/readyz").status, 200);
}

/// Not ready once the spawner that forks each call is gone: 503 `spawner`.
#[test]
fn readyz_is_503_spawner_once_the_spawner_is_gone() {
    let env = Env::new();
    let http = confined_http(&env, &[]);
    assert_eq!(probe(&http, "GET", "/readyz").status, 200);
    let pid = http.child.id();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .expect("the server's children");
    let spawner: i32 =
        children.split_whitespace().next().expect("the spawner").parse().expect("a pid");
    // SAFETY: kill(2) on a pid this test's server forked.
    assert_eq!(unsafe { libc::kill(spawner, libc::SIGKILL) }, 0);
    let deadline = Instant::now() + PATIENCE;
    let readyz = loop {
        let readyz = probe(&http, "GET", "/readyz");
        if readyz.status != 200 || Instant::now() > deadline {
            break readyz;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!((readyz.status, readyz.body.as_str()), (503, "spawner\n"), "{readyz:?}");
    assert_eq!(probe(&http, "GET", "/healthz").status, 200);
}

#[test]
fn mcp_http_every_sse_event_names_its_type_message() {
    let env = Env::new();
    let http = Http::start(&env, &["--unconfined", "--listen", "0"], &[]);
    let reply = http.post(None, &initialize(json!({})));
    assert_eq!(reply.header("content-type"), Some("text/event-stream"), "{reply:?}");
    let session = reply.header("mcp-session-id").expect("a session id").to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let listed = http.post(Some(&session), &call);
    for reply in [&reply, &listed] {
        let events: Vec<&str> = reply.body.split("\n\n").filter(|e| e.contains("data:")).collect();
        assert!(!events.is_empty(), "{reply:?}");
        for event in events {
            assert!(event.starts_with("event: message\ndata:"), "{event:?}");
        }
    }
    assert_eq!(reply.answer()["id"], 1);
}

#[test]
fn mcp_http_delete_of_a_session_is_answered_200() {
    let env = Env::new();
    let http = Http::start(&env, &["--unconfined", "--listen", "0"], &[]);
    let session = http.session(json!({}));
    let reply = http.send("DELETE", &[("Mcp-Session-Id", &session)], "");
    assert_eq!(reply.status, 200, "{reply:?}");
    let after = http.post(Some(&session), &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(after.status, 404, "{after:?}");
}

#[test]
fn mcp_http_roots_list_goes_out_with_empty_params() {
    let env = Env::new();
    let http = Http::start(&env, &["--listen", "0"], &[]);
    let reply = http.post(None, &initialize(json!({"roots": {"listChanged": true}})));
    let session = reply.header("mcp-session-id").expect("a session id").to_owned();
    let server_messages = listen_stream(&http, &session);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(http.post(Some(&session), &initialized).status, 202);
    let question = server_messages.recv_timeout(PATIENCE).expect("the server asks roots/list");
    assert_eq!(question["method"], "roots/list", "{question}");
    assert_eq!(question["params"], json!({}), "{question}");
}

#[test]
fn mcp_http_a_call_before_initialized_asks_no_roots_until_it_comes() {
    let env = Env::new();
    let http = Http::start(&env, &["--listen", "0"], &[]);
    let reply = http.post(None, &initialize(json!({"roots": {"listChanged": true}})));
    let session = reply.header("mcp-session-id").expect("a session id").to_owned();
    let server_messages = listen_stream(&http, &session);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "echo early"}}});
    let (addr, early) = (http.addr.clone(), session.clone());
    let called = std::thread::spawn(move || {
        send_to(&addr, "POST", &[("Mcp-Session-Id", &early)], &call.to_string())
    });
    let quiet = server_messages.recv_timeout(std::time::Duration::from_millis(700));
    assert!(quiet.is_err(), "a server request before notifications/initialized: {quiet:?}");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(http.post(Some(&session), &initialized).status, 202);
    let question = server_messages.recv_timeout(PATIENCE).expect("the server asks roots/list");
    assert_eq!(question["method"], "roots/list", "{question}");
    let answer = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"roots": [{"uri": file_uri(&env.work())}]}});
    assert_eq!(http.post(Some(&session), &answer).status, 202);
    let reply = called.join().expect("the call's thread");
    let answer = reply.answer();
    assert_eq!(answer["result"]["structuredContent"]["output"], "early", "{answer}");
}

#[test]
fn mcp_http_a_second_initialize_is_refused_and_the_session_goes_on() {
    let env = Env::new();
    let http = Http::start(&env, &["--unconfined", "--listen", "0"], &[]);
    let session = http.session(json!({}));
    let again = http.post(Some(&session), &initialize(json!({})));
    let answer = again.answer();
    assert_eq!(answer["error"]["code"], -32600, "{again:?}");
    assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("already")), "{answer}");
    let ping = http.post(Some(&session), &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(ping.answer()["result"], json!({}), "{ping:?}");
}

/// Sends a POST and hands its SSE answer's messages on as they come, so
/// that a server request on it can be answered before the call ends.
fn post_stream(http: &Http, session: &str, message: &Value) -> Receiver<Value> {
    let body = message.to_string();
    let mut stream = TcpStream::connect(&http.addr).expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{body}",
        http.addr,
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write");
    sse_messages(stream)
}

#[test]
fn mcp_http_a_client_that_never_opens_get_is_asked_roots_on_its_calls_stream() {
    let env = Env::new();
    let (inside, outside) = (env.mkdir("inside"), env.mkdir("outside"));
    let http = Http::start(&env, &["--listen", "0"], &[]);
    // Roots declared, no GET /mcp ever opened (as chuk mcp-cli does).
    let session = http.session(json!({"roots": {"listChanged": true}}));
    let write = |id: u64, dir: &Path| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name":
            "file_write", "arguments": {"file_path": dir.join("note.txt"), "content": "x"}}})
    };
    let messages = post_stream(&http, &session, &write(2, &inside));
    let question = messages.recv_timeout(PATIENCE).expect("roots/list on the call's stream");
    assert_eq!(question["method"], "roots/list", "{question}");
    assert_eq!(question["params"], json!({}), "{question}");
    let answer = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"roots": [{"uri": file_uri(&inside)}]}});
    assert_eq!(http.post(Some(&session), &answer).status, 202);
    let written = messages.recv_timeout(PATIENCE).expect("the call's answer");
    assert_eq!(written["id"], 2, "{written}");
    assert_eq!(written["result"]["isError"], false, "{written}");
    assert_eq!(std::fs::read_to_string(inside.join("note.txt")).expect("written"), "x");
    // The session is confined to that root: no question, a refusal.
    let refused =
        http.call(&session, 3, "file_write", write(3, &outside)["params"]["arguments"].clone());
    assert_eq!(
        refused["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED",
        "{refused}"
    );
    assert!(!outside.join("note.txt").exists());
}

#[test]
fn mcp_http_a_client_that_answers_roots_on_no_stream_is_asked_again_once() {
    let env = Env::new();
    let root = env.mkdir("root");
    let http = Http::start(&env, &["--listen", "0", "--root", &root.display().to_string()], &[]);
    // As chuk mcp-cli 0.20.1: roots declared, no GET stream, no answer.
    let session = http.session(json!({"roots": {"listChanged": true}}));
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": "echo hi"}}})
    };
    let first = post_stream(&http, &session, &call(2));
    let question = first.recv_timeout(PATIENCE).expect("roots/list on the call's stream");
    assert_eq!(question["method"], "roots/list", "{question}");
    let refused = first.recv_timeout(PATIENCE * 2).expect("the call's answer");
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED");
    // Not asked again on the next call's stream: refused at once, saying why.
    let second = post_stream(&http, &session, &call(3));
    let answer = second.recv_timeout(PATIENCE).expect("the second call's answer");
    assert_eq!(answer["id"], 3, "asked again: {answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("the MCP client did not answer roots/list within 10 s, so no call runs"),
        "{answer}"
    );
}
