//! Every path of `ikigai-tools mcp` is confined by roots or refused
//! (docs/MCP.md, "Confining a session", and its table of paths): stdio and
//! HTTP; a session (each handshake revision), the stateless revision, and
//! the stateless revision's `_meta` inside a session; started with
//! `--root`, with neither, or with `--unconfined`; a client that offers
//! roots, offers none, or offers an empty list. Each `paths_` test runs one
//! transport and kind of request through every start × client combination
//! and asserts what the calls reach; the others guard, each by name, a
//! break found by attacking the MCP roots.
//!
//! The fixture: `work/r` (the `--root` ceiling), `work/r/a` (the client's
//! root, beneath it), a secret in `outside/` beside `work/`.

use crate::common;
use crate::common::mcp::{answer_roots_list, exists, file_uri, Session, PATIENCE};
use crate::mcp_http::{listen_stream, Http};

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{json, Value};

/// How the server was started.
#[derive(Clone, Copy, Debug)]
enum Start {
    /// `--root work/r`.
    Root,
    /// Neither `--root` nor `--unconfined`.
    Neither,
    /// `--unconfined`.
    Unconfined,
}

/// What the client says of roots.
#[derive(Clone, Copy, Debug)]
enum Client {
    /// It does not declare the capability.
    NotOffered,
    /// It declares it and answers `[]`.
    Empty,
    /// It declares it and answers `[work/r/a]`.
    Offers,
}

const STARTS: [Start; 3] = [Start::Root, Start::Neither, Start::Unconfined];
const CLIENTS: [Client; 3] = [Client::NotOffered, Client::Empty, Client::Offers];
const HANDSHAKE_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const STATELESS: &str = "2026-07-28";

/// What the calls of a path reached.
#[derive(Debug, PartialEq)]
enum Reach {
    /// Everything, the secret too: `--unconfined` and no client roots.
    Machine,
    /// `r` (and `a` beneath it), not the secret: the `--root` ceiling.
    Ceiling,
    /// `a` alone: the client's root.
    ClientRoot,
    /// Nothing: every call refused (`PERMISSION_DENIED`) saying this.
    Refused(String),
}

/// Of a refusal, the words that say why.
const NO_ROOTS: &str = "the MCP server was started without --root and the client names no \
                        roots, so no call runs: start it as `ikigai-tools mcp --root DIR` to \
                        confine the tools to DIR, or as `ikigai-tools mcp --unconfined` to \
                        serve the whole machine on purpose";
const EMPTY_LIST: &str = "the MCP client's list of roots is empty and the server was started \
                          without --root, so no call runs: start it as `ikigai-tools mcp --root \
                          DIR` to confine the tools to DIR, or as `ikigai-tools mcp \
                          --unconfined` to serve the whole machine on purpose, or add a root \
                          in the client";

/// What each path must reach: docs/MCP.md's table.
fn expected(start: Start, client: Client) -> Reach {
    match (start, client) {
        (Start::Root, Client::NotOffered | Client::Empty) => Reach::Ceiling,
        (_, Client::Offers) => Reach::ClientRoot,
        (Start::Neither, Client::NotOffered) => Reach::Refused(NO_ROOTS.to_owned()),
        (Start::Neither, Client::Empty) => Reach::Refused(EMPTY_LIST.to_owned()),
        (Start::Unconfined, Client::NotOffered | Client::Empty) => Reach::Machine,
    }
}

struct Fixture {
    env: Env,
    r: PathBuf,
    a: PathBuf,
    secret: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let env = Env::new();
        let (r, a) = (env.mkdir("r"), env.mkdir("r/a"));
        std::fs::write(r.join("r.txt"), "in r\n").expect("write r.txt");
        std::fs::write(a.join("a.txt"), "in a\n").expect("write a.txt");
        let secret = env.beside("outside").join("secret.txt");
        std::fs::write(&secret, "SECRET\n").expect("write the secret");
        Fixture { env, r, a, secret }
    }

    fn args(&self, start: Start) -> Vec<OsString> {
        match start {
            Start::Root => vec!["--root".into(), self.r.clone().into()],
            Start::Neither => vec![],
            Start::Unconfined => vec!["--unconfined".into()],
        }
    }

    /// The roots the client answers; `None` when it offers none.
    fn offered(&self, client: Client) -> Option<Vec<String>> {
        match client {
            Client::NotOffered => None,
            Client::Empty => Some(vec![]),
            Client::Offers => Some(vec![file_uri(&self.a)]),
        }
    }

    /// What `read` (a file_read's `result`, for a path) reaches.
    fn reach(&self, mut read: impl FnMut(&Path) -> Value) -> Reach {
        let files = [self.r.join("r.txt"), self.a.join("a.txt"), self.secret.clone()];
        let got: Vec<Result<(), String>> = files
            .iter()
            .map(|path| {
                let result = read(path);
                if result["isError"] == false {
                    return Ok(());
                }
                assert!(!result.to_string().contains("SECRET"), "the secret leaked: {result}");
                let answer = &result["structuredContent"];
                assert_eq!(answer["error_code"], "PERMISSION_DENIED", "{result}");
                let error = answer["error"].as_str().unwrap_or_default();
                Err(error.strip_prefix("Permission denied: ").unwrap_or(error).to_owned())
            })
            .collect();
        let confined_to =
            |root: &Path| format!("({})", root.canonicalize().expect("canonical root").display());
        match got.as_slice() {
            [Ok(()), Ok(()), Ok(())] => Reach::Machine,
            [Ok(()), Ok(()), Err(e)] if e.contains(&confined_to(&self.r)) => Reach::Ceiling,
            [Err(e), Ok(()), Err(_)] if e.contains(&confined_to(&self.a)) => Reach::ClientRoot,
            [Err(a), Err(b), Err(c)] if a == b && b == c => Reach::Refused(a.clone()),
            other => panic!("no one confinement: {other:?}"),
        }
    }
}

fn os(args: &[OsString]) -> Vec<&OsStr> {
    args.iter().map(OsString::as_os_str).collect()
}

fn read_params(path: &Path) -> Value {
    json!({"name": "file_read", "arguments": {"file_path": path}})
}

/// The `_meta` of a stateless-revision request; `roots`: whether it
/// declares the capability.
fn stateless_meta(roots: bool) -> Value {
    let capabilities = if roots { json!({"roots": {}}) } else { json!({}) };
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// The roots as an `inputResponses` entry.
fn roots_response(uris: &[String]) -> Value {
    let roots: Vec<Value> = uris.iter().map(|uri| json!({"uri": uri})).collect();
    json!({"roots": {"roots": roots}})
}

/// Whether `result` asks for the roots (stateless revision), with
/// `params: {}` on every transport.
fn asks_for_roots(result: &Value) -> bool {
    *result
        == json!({"resultType": "input_required",
            "inputRequests": {"roots": {"method": "roots/list", "params": {}}}})
}

/// A stateless file_read of `path` through `send` (params to the answer's
/// `result`): a client offering roots (`offered`) is asked for them, and
/// sends the call again with them.
fn stateless_read(
    send: &mut impl FnMut(Value) -> Value,
    path: &Path,
    offered: Option<&[String]>,
) -> Value {
    let mut params = read_params(path);
    params["_meta"] = stateless_meta(offered.is_some());
    let first = send(params.clone());
    let Some(uris) = offered else { return first };
    assert!(asks_for_roots(&first), "a client offering roots is asked for them first: {first}");
    params["inputResponses"] = roots_response(uris);
    send(params)
}

// --- stdio -------------------------------------------------------------------

/// A stdio session on `revision`, its client as `client` says, past the
/// roots question if it offers roots.
fn stdio_session(f: &Fixture, start: Start, client: Client, revision: &str) -> Session {
    let mut session = Session::start_with(&f.env, &os(&f.args(start)));
    let offered = f.offered(client);
    let capabilities =
        if offered.is_some() { json!({"roots": {"listChanged": true}}) } else { json!({}) };
    let params = json!({"protocolVersion": revision, "capabilities": capabilities,
        "clientInfo": {"name": "tests", "version": "0"}});
    let answer = session.request(1, "initialize", params);
    assert_eq!(answer["result"]["protocolVersion"], revision, "{answer}");
    session
        .send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    if let Some(uris) = offered {
        answer_roots_list(&mut session, &uris);
    }
    session
}

#[test]
fn mcp_paths_stdio_session_every_revision_is_confined_or_refused() {
    let f = Fixture::new();
    for revision in HANDSHAKE_REVISIONS {
        for (start, client) in STARTS.into_iter().flat_map(|s| CLIENTS.map(|c| (s, c))) {
            let mut session = stdio_session(&f, start, client, revision);
            let mut id = 10;
            let reach = f.reach(|path| {
                id += 1;
                session.request(id, "tools/call", read_params(path))["result"].clone()
            });
            assert_eq!(reach, expected(start, client), "{revision} {start:?} {client:?}");
        }
    }
}

#[test]
fn mcp_paths_stdio_stateless_is_confined_or_refused() {
    let f = Fixture::new();
    for (start, client) in STARTS.into_iter().flat_map(|s| CLIENTS.map(|c| (s, c))) {
        let mut session = Session::start_with(&f.env, &os(&f.args(start)));
        let offered = f.offered(client);
        let mut id = 10;
        let mut send = |params: Value| {
            id += 1;
            session.request(id, "tools/call", params)["result"].clone()
        };
        let reach = f.reach(|path| stateless_read(&mut send, path, offered.as_deref()));
        assert_eq!(reach, expected(start, client), "{start:?} {client:?}");
    }
}

/// Inside a session, a request carrying the stateless revision's `_meta`
/// (declaring roots as the session's client did, with `inputResponses`
/// naming `/`) runs under the session's roots, never under its own.
#[test]
fn mcp_paths_stateless_meta_in_a_stdio_session_runs_under_the_session_roots() {
    let f = Fixture::new();
    for (start, client) in STARTS.into_iter().flat_map(|s| CLIENTS.map(|c| (s, c))) {
        let mut session = stdio_session(&f, start, client, "2025-06-18");
        let mut id = 10;
        let reach = f.reach(|path| {
            id += 1;
            let mut params = read_params(path);
            params["_meta"] = stateless_meta(f.offered(client).is_some());
            params["inputResponses"] = roots_response(&["file:///".to_owned()]);
            session.request(id, "tools/call", params)["result"].clone()
        });
        assert_eq!(reach, expected(start, client), "{start:?} {client:?}");
    }
}

/// A session whose client declared no roots at the handshake but declares
/// them in a call's `_meta` is asked for them (`roots/list`) before the
/// call runs, and the call runs under the answer.
#[test]
fn mcp_a_session_client_declaring_roots_in_meta_is_asked_before_the_call_runs() {
    let f = Fixture::new();
    for start in STARTS {
        let mut session = stdio_session(&f, start, Client::NotOffered, "2025-06-18");
        let mut params = read_params(&f.secret);
        params["_meta"] = stateless_meta(true);
        session.send(2, "tools/call", params);
        answer_roots_list(&mut session, &[file_uri(&f.a)]);
        let (answer, _) = session.response(2);
        let mut id = 10;
        let reach = f.reach(|path| {
            id += 1;
            session.request(id, "tools/call", read_params(path))["result"].clone()
        });
        assert_eq!(reach, Reach::ClientRoot, "{start:?}: {answer}");
        assert_eq!(answer["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED");
    }
}

// --- HTTP --------------------------------------------------------------------

fn http(f: &Fixture, start: Start) -> Http {
    let args = f.args(start);
    let mut all = vec!["--listen", "0"];
    all.extend(args.iter().map(|a| a.to_str().expect("UTF-8 argument")));
    Http::start(&f.env, &all, &[])
}

/// A session on `revision`, its client as `client` says, past the roots
/// question if it offers roots: its id.
fn http_session(http: &Http, f: &Fixture, client: Client, revision: &str) -> String {
    let offered = f.offered(client);
    let capabilities =
        if offered.is_some() { json!({"roots": {"listChanged": true}}) } else { json!({}) };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": revision, "capabilities": capabilities,
        "clientInfo": {"name": "tests", "version": "0"}}});
    let reply = http.post(None, &initialize);
    assert_eq!(reply.answer()["result"]["protocolVersion"], revision, "{reply:?}");
    let session = reply.header("mcp-session-id").expect("a session id").to_owned();
    let server_messages = listen_stream(http, &session);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(http.post(Some(&session), &initialized).status, 202);
    if let Some(uris) = offered {
        let question = server_messages.recv_timeout(PATIENCE).expect("the server asks roots/list");
        assert_eq!(question["method"], "roots/list", "{question}");
        let roots: Vec<Value> = uris.iter().map(|uri| json!({"uri": uri})).collect();
        let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": roots}});
        assert_eq!(http.post(Some(&session), &answer).status, 202);
    }
    session
}

/// One stateless-revision request, no session: the answer's `result`.
fn http_stateless(http: &Http, id: u64, params: &Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let name = params["name"].as_str().unwrap_or_default();
    let headers =
        [("MCP-Protocol-Version", STATELESS), ("Mcp-Method", "tools/call"), ("Mcp-Name", name)];
    let reply = http.send("POST", &headers, &request.to_string());
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.answer()["result"].clone()
}

#[test]
fn mcp_paths_http_session_every_revision_is_confined_or_refused() {
    let f = Fixture::new();
    for start in STARTS {
        let server = http(&f, start);
        for (i, client) in CLIENTS.into_iter().enumerate() {
            // Each revision in turn, every one met across the clients.
            for revision in HANDSHAKE_REVISIONS.iter().cycle().skip(i).take(2) {
                let session = http_session(&server, &f, client, revision);
                let reach = f.reach(|path| {
                    server.call(&session, 2, "file_read", json!({"file_path": path}))["result"]
                        .clone()
                });
                assert_eq!(reach, expected(start, client), "{revision} {start:?} {client:?}");
            }
        }
    }
}

#[test]
fn mcp_paths_http_stateless_is_confined_or_refused() {
    let f = Fixture::new();
    for start in STARTS {
        let server = http(&f, start);
        for client in CLIENTS {
            let offered = f.offered(client);
            let mut send = |params: Value| http_stateless(&server, 2, &params);
            let reach = f.reach(|path| stateless_read(&mut send, path, offered.as_deref()));
            assert_eq!(reach, expected(start, client), "{start:?} {client:?}");
        }
    }
}

/// Over HTTP, rmcp routes a request carrying the stateless revision's
/// `_meta` (and its `MCP-Protocol-Version` header, which rmcp requires to
/// match) outside any session, whatever `Mcp-Session-Id` it names: it would
/// run under the roots it carries (here `/`), not the session's. Such a
/// request is refused before rmcp sees it; without the header rmcp refuses
/// it itself. No call runs.
#[test]
fn mcp_paths_stateless_meta_in_an_http_session_is_refused() {
    let f = Fixture::new();
    for start in [Start::Unconfined, Start::Neither, Start::Root] {
        let server = http(&f, start);
        for client in CLIENTS {
            let session = http_session(&server, &f, client, "2025-06-18");
            let mut params = read_params(&f.secret);
            params["_meta"] = stateless_meta(true);
            params["inputResponses"] = roots_response(&["file:///".to_owned()]);
            let request =
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
            let headers = [
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", STATELESS),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "file_read"),
            ];
            let reply = server.send("POST", &headers, &request.to_string());
            assert_eq!(reply.status, 400, "{start:?} {client:?}: {reply:?}");
            assert!(
                reply.body.starts_with(
                    "Bad Request: a request of protocol revision 2026-07-28 or later has no \
                     session, so it cannot carry Mcp-Session-Id"
                ),
                "{reply:?}"
            );
            let reply = server.post(Some(&session), &request);
            assert_eq!(
                reply.answer()["error"]["message"],
                "request _meta protocolVersion requires MCP-Protocol-Version header",
                "{reply:?}"
            );
            assert!(!reply.body.contains("SECRET"), "{reply:?}");
        }
    }
}

// --- the breaks, by name -------------------------------------------------------

/// A break found by attack: over HTTP a stateless call whose `_meta` declares
/// roots was served at once, unconfined (`/etc/hostname` read), where stdio
/// asks for the roots; rmcp's per-request server made it look like a
/// session without the capability.
#[test]
fn http_stateless_call_of_a_roots_client_asks_for_its_roots() {
    let f = Fixture::new();
    let server = http(&f, Start::Unconfined);
    let mut params = read_params(&f.secret);
    params["_meta"] = stateless_meta(true);
    let first = http_stateless(&server, 2, &params);
    assert!(asks_for_roots(&first), "{first}");
    params["inputResponses"] = roots_response(&[file_uri(&f.a)]);
    let read = http_stateless(&server, 3, &params);
    assert!(!read.to_string().contains("SECRET"), "the secret leaked: {read}");
    assert_eq!(read["structuredContent"]["error_code"], "PERMISSION_DENIED", "{read}");
    let mut inside = read_params(&f.a.join("a.txt"));
    inside["_meta"] = stateless_meta(true);
    inside["inputResponses"] = roots_response(&[file_uri(&f.a)]);
    assert_eq!(http_stateless(&server, 4, &inside)["structuredContent"]["output"], "in a\n");
}

/// A break found by attack: without `--root`, and a client naming no roots, every
/// call ran on the whole machine. Now each is refused, saying how to start
/// the server: `--root DIR`, or `--unconfined` on purpose. On stdio and
/// over HTTP, in a session and on the stateless revision.
#[test]
fn mcp_without_root_refuses_every_call_naming_root_and_unconfined() {
    let f = Fixture::new();
    let escaped = f.secret.with_file_name("escaped");
    let write = json!({"name": "bash",
        "arguments": {"command": format!("echo out > '{}'", escaped.display())}});
    let refused = |result: &Value| {
        assert_eq!(
            result["structuredContent"],
            json!({"error": format!("Permission denied: {NO_ROOTS}"),
                "error_code": "PERMISSION_DENIED"}),
            "{result}"
        );
    };
    let mut session = Session::initialized_with(&f.env, &[], json!({}));
    refused(&session.call(2, "file_read", json!({"file_path": f.secret}))["result"]);
    refused(&session.request(3, "tools/call", write.clone())["result"]);
    let mut stateless = write.clone();
    stateless["_meta"] = stateless_meta(false);
    let mut fresh = Session::start_with(&f.env, &[]);
    refused(&fresh.request(2, "tools/call", stateless.clone())["result"]);
    let server = http(&f, Start::Neither);
    let id = server.session(json!({}));
    refused(&server.call(&id, 2, "bash", write["arguments"].clone())["result"]);
    refused(&http_stateless(&server, 3, &stateless));
    assert!(!exists(&escaped), "a call ran without roots");
}

/// `--unconfined` is the explicit choice of no roots: beside `--root` or
/// `IKIGAI_TOOLS_ROOTS` it cannot mean anything, and is a usage error.
#[test]
fn mcp_unconfined_with_root_or_the_roots_variable_is_a_usage_error() {
    let f = Fixture::new();
    let with_root =
        f.env.cmd("ikigai-tools").arg("mcp").arg("--unconfined").arg("--root").arg(&f.r);
    let with_var =
        f.env.cmd("ikigai-tools").arg("mcp").arg("--unconfined").env("IKIGAI_TOOLS_ROOTS", &f.r);
    for (ran, says) in [
        (
            with_root.stdin("").run(),
            "--unconfined cannot be used with --root: --root confines the tools to DIR, \
             --unconfined serves the whole machine; pass one of them",
        ),
        (
            with_var.stdin("").run(),
            "--unconfined cannot be used while IKIGAI_TOOLS_ROOTS is set, which confines the \
             server to its directories; unset it, or drop --unconfined",
        ),
    ] {
        assert_eq!(ran.code, Some(2), "{}", ran.stderr);
        assert_eq!(ran.stdout, b"");
        assert_eq!(ran.stderr, format!("ikigai-tools mcp: {says}\n"));
    }
}

/// A break found by attack: a client's roots replaced `--root`, so a client (a
/// confined command re-entering the server, say) offering `$HOME` got it.
/// `--root` is a ceiling: a client root outside it — by prefix only
/// (`r_evil`), through a link leading out, or wider — is left out, and with
/// none left every call is refused saying which and what to do.
#[test]
fn client_roots_outside_the_root_ceiling_are_refused() {
    let f = Fixture::new();
    let evil = f.env.mkdir("r_evil");
    std::os::unix::fs::symlink(f.secret.parent().expect("outside/"), f.r.join("out"))
        .expect("symlink");
    let outside_uris = [
        file_uri(f.secret.parent().expect("outside/")),
        file_uri(&evil),
        file_uri(&f.r.join("out")),
        file_uri(&f.env.work()),
    ];
    let ceiling = f.r.canonicalize().expect("canonical r");
    let says = |uri: &str| {
        format!(
            "the MCP client's roots ({uri}) are not within the directories the server was \
             started with (--root {}), which bound them, so no call runs: name one of those \
             directories, or one beneath it, as the client's root, or start the server with a \
             --root that holds the client's roots",
            ceiling.display()
        )
    };
    let args = f.args(Start::Root);
    for uri in &outside_uris {
        let mut session =
            Session::initialized_with(&f.env, &os(&args), json!({"roots": {"listChanged": true}}));
        answer_roots_list(&mut session, std::slice::from_ref(uri));
        let mut id = 10;
        let reach = f.reach(|path| {
            id += 1;
            session.request(id, "tools/call", read_params(path))["result"].clone()
        });
        assert_eq!(reach, Reach::Refused(says(uri)), "{uri}");
    }
    // One outside beside one within: the one within confines.
    let mut session =
        Session::initialized_with(&f.env, &os(&args), json!({"roots": {"listChanged": true}}));
    answer_roots_list(&mut session, &[outside_uris[3].clone(), file_uri(&f.a)]);
    let mut id = 10;
    let reach = f.reach(|path| {
        id += 1;
        session.request(id, "tools/call", read_params(path))["result"].clone()
    });
    assert_eq!(reach, Reach::ClientRoot);
    // The stateless revision on stdio: the roots sent with the call.
    let mut stateless = Session::start_with(&f.env, &os(&args));
    let mut id = 10;
    let mut send = |params: Value| {
        id += 1;
        stateless.request(id, "tools/call", params)["result"].clone()
    };
    let reach = f.reach(|path| stateless_read(&mut send, path, Some(&outside_uris[..1])));
    assert_eq!(reach, Reach::Refused(says(&outside_uris[0])));
    // Over HTTP, in a new session: what a command re-entering the server does.
    let server = http(&f, Start::Root);
    let reply = server.post(None, &crate::mcp_http::initialize(json!({"roots": {}})));
    let id = reply.header("mcp-session-id").expect("a session id").to_owned();
    let server_messages = listen_stream(&server, &id);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(server.post(Some(&id), &initialized).status, 202);
    let question = server_messages.recv_timeout(PATIENCE).expect("the server asks roots/list");
    let home = json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"roots": [{"uri": outside_uris[3]}]}});
    assert_eq!(server.post(Some(&id), &home).status, 202);
    let reach = f.reach(|path| {
        server.call(&id, 2, "file_read", json!({"file_path": path}))["result"].clone()
    });
    assert_eq!(reach, Reach::Refused(says(&outside_uris[3])));
    // The stateless revision: the roots sent with the call, bounded alike.
    let mut params = read_params(&f.secret);
    params["_meta"] = stateless_meta(true);
    params["inputResponses"] = roots_response(&[outside_uris[0].clone()]);
    let read = http_stateless(&server, 3, &params);
    assert_eq!(
        read["structuredContent"]["error"],
        format!("Permission denied: {}", says(&outside_uris[0]))
    );
}
