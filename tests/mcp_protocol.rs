//! The JSON-RPC points of `ikigai-tools mcp`'s stdio transport
//! (docs/MCP.md, "Protocol"): every reply written even under load, batches
//! on the revision that has them, one id in flight once, ids echoed byte
//! for byte, a bounded line, `initialize` on the stateless revision, and
//! the shape of the server's `roots/list` request.

use crate::common::mcp::{initialize_params, pids_of, sleeper, unconfined, Session, PATIENCE};
use crate::common::*;

use std::io::Write;

use crate::common::procs::assert_gone_within;
use serde_json::{json, Value};

/// A session past `initialize` on `revision` and `notifications/initialized`.
fn session_on(env: &Env, revision: &str) -> Session {
    let mut session = Session::start_with(env, &unconfined());
    let answer = session.request(1, "initialize", initialize_params(revision));
    assert_eq!(answer["result"]["protocolVersion"], revision, "{answer}");
    session
        .send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    session
}

fn ping(id: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()
}

/// The next line, which must come.
fn line(session: &Session) -> String {
    session.next_line(PATIENCE).expect("the server answers")
}

/// Asserts nothing more comes before the answer to a ping sent now.
fn assert_quiet(session: &mut Session, id: i64) {
    session.send_line(&ping(json!(id)));
    assert_eq!(
        session.next(PATIENCE),
        Some(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
        "something came before the ping's answer"
    );
}

/// `count` pings and `count` unparsable lines interleaved in one write,
/// while calls answer: every ping answer and every -32700 reply comes.
fn every_reply_comes(session: &mut Session, count: usize, random_seed: u64) {
    // Calls that end while the lines are read, so responses are ready to
    // go out while a reject is being written (the lost reply's cause).
    for i in 0..4 {
        let id = 1000 + i;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": format!("sleep 0.0{i}; echo {i}")}}});
        session.send_line(&request.to_string());
    }
    let mut text = String::new();
    let mut state = random_seed;
    for i in 0..count {
        // A fixed, seeded order of the two kinds (xorshift), printed below.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if state.is_multiple_of(2) {
            text.push_str(&format!("{{not json {i}\n{}\n", ping(json!(i))));
        } else {
            text.push_str(&format!("{}\n{{not json {i}\n", ping(json!(i))));
        }
    }
    println!("random seed {random_seed}: {count} pings and {count} garbage lines");
    session.send_line(text.trim_end());
    let (mut pings, mut parse_errors, mut calls) = (0, 0, 0);
    while pings < count || parse_errors < count || calls < 4 {
        let Some(message) = session.next(PATIENCE) else {
            panic!("missing replies: {pings} pings, {parse_errors} -32700, {calls} calls answered")
        };
        if message["error"]["code"] == -32700 {
            assert_eq!(message["id"], Value::Null, "{message}");
            parse_errors += 1;
        } else if message["id"].as_i64().is_some_and(|id| id >= 1000) {
            assert!(message["result"].is_object(), "{message}");
            calls += 1;
        } else {
            assert_eq!(message["result"], json!({}), "{message}");
            pings += 1;
        }
    }
    assert_quiet(session, 99_999);
}

#[test]
fn mcp_proto_a_parse_error_reply_is_never_lost_while_responses_go_out() {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    every_reply_comes(&mut session, 300, 16);
}

/// The long twin: many sessions, the machine's cores kept busy.
#[test]
#[ignore]
fn mcp_proto_a_parse_error_reply_is_never_lost_under_cpu_load() {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                x
            })
        })
        .collect();
    let env = Env::new();
    for random_seed in 1..=60 {
        let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
        every_reply_comes(&mut session, 200, random_seed);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for thread in busy {
        let _ = thread.join();
    }
}

#[test]
fn mcp_proto_a_batch_on_2025_03_26_is_answered_as_one_array() {
    let env = Env::new();
    let mut session = session_on(&env, "2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": "three", "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": 5, "x": 1},
    ]);
    session.send_line(&batch.to_string());
    let answer = session.next(PATIENCE).expect("the batch's answer");
    let answers = answer.as_array().unwrap_or_else(|| panic!("not an array: {answer}"));
    let mut by_id: Vec<(String, &Value)> =
        answers.iter().map(|a| (a["id"].to_string(), a)).collect();
    by_id.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<&str> = by_id.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["\"three\"", "2", "4", "5"], "{answer}");
    assert_eq!(*by_id[1].1, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert!(by_id[0].1["result"]["tools"].is_array(), "{answer}");
    assert_eq!(by_id[2].1["error"]["code"], -32601, "{answer}");
    assert_eq!(by_id[3].1["error"]["code"], -32600, "{answer}");

    // Only notifications: no reply at all.
    session.send_line(
        &json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]).to_string(),
    );
    assert_quiet(&mut session, 6);
    // An empty array: one error object.
    session.send_line("[]");
    let empty = session.next(PATIENCE).expect("an answer to []");
    assert_eq!(empty["id"], Value::Null, "{empty}");
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    assert!(empty.get("result").is_none(), "{empty}");
}

#[test]
fn mcp_proto_a_batch_on_another_revision_or_before_initialize_is_one_error() {
    let env = Env::new();
    let batch = json!([{"jsonrpc": "2.0", "id": 2, "method": "ping"}]).to_string();
    let mut session = session_on(&env, "2025-06-18");
    session.send_line(&batch);
    let answer = session.next(PATIENCE).expect("an answer");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("batches are not supported in revision 2025-06-18"), "{answer}");
    assert_quiet(&mut session, 3);

    let mut fresh = Session::start_with(&env, &[]);
    fresh.send_line(&batch);
    let answer = fresh.next(PATIENCE).expect("an answer");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap_or_default().contains("before"), "{answer}");
}

#[test]
fn mcp_proto_a_second_request_with_an_id_in_flight_is_an_error_and_the_first_answers() {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    let call = |command: &str| {
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": command}}})
        .to_string()
    };
    session.send_line(&call("sleep 0.5; echo first"));
    session.send_line(&call("echo second"));
    let refused = session.next(PATIENCE).expect("the second's answer");
    assert_eq!(refused["id"], 5, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap_or_default().contains("id 5"), "{refused}");
    let first = session.next(PATIENCE).expect("the first's answer");
    assert_eq!(first["id"], 5, "{first}");
    assert!(first["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("first"));
    // Answered: the id may be used again.
    session.send_line(&call("echo again"));
    let again = session.next(PATIENCE).expect("the reused id's answer");
    assert!(again["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("again"));
}

#[test]
fn mcp_proto_ids_are_echoed_byte_for_byte() {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    for id in [
        "123456789012345678901234567890",
        "-7",
        "-123456789012345678901234567890",
        "1.50",
        "1e3",
        "\"x\\u00e9\\\"y\"",
        "\"\"",
    ] {
        session.send_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        assert_eq!(line(&session), format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
    }
}

#[test]
fn mcp_proto_a_cancel_names_the_request_by_its_echoed_id() {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    let pidfile = env.work().join("pids");
    let id = "123456789012345678901234567890";
    let call = json!({"name": "bash", "arguments": sleeper(&pidfile)});
    session.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{call}}}"#
    ));
    let pids = pids_of(&pidfile);
    session.send_line(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
    ));
    assert_gone_within(&pids, PATIENCE);
    // No answer to the cancelled call, and its id is free again.
    session.send_line(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
    assert_eq!(line(&session), format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
}

/// The largest a line may be (src/mcp/transport, docs/MCP.md).
const LINE_LIMIT: u64 = 64 << 20;

fn peak_memory(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    let kib: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("kB");
    kib << 10
}

#[test]
fn mcp_proto_a_line_over_the_limit_is_an_error_skipped_without_buffering() {
    let env = Env::new();
    let mut session = Session::initialized_with(&env, &unconfined(), json!({}));
    let mut stdin = session.take_stdin();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        stdin.write_all(br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":""#)?;
        for _ in 0..200 {
            stdin.write_all(&chunk)?;
        }
        stdin.write_all(b"\"}}}\n")?;
        stdin.write_all(format!("{}\n", ping(json!(3))).as_bytes())?;
        stdin.flush()?;
        Ok::<_, std::io::Error>(stdin)
    });
    let refused = session.next(PATIENCE).expect("an error for the long line");
    assert_eq!(refused["id"], Value::Null, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"].as_str().unwrap_or_default().contains("64 MiB"),
        "{refused}"
    );
    let answer = session.next(PATIENCE).expect("the ping after it");
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    let _stdin = writer.join().expect("writer").expect("write the long line");
    let peak = peak_memory(session.pid());
    println!("peak memory {} MiB", peak >> 20);
    assert!(peak < LINE_LIMIT + (48 << 20), "peak {} MiB", peak >> 20);
}

#[test]
fn mcp_proto_initialize_with_only_stateless_metadata_is_method_not_found() {
    let env = Env::new();
    let mut session = Session::start_with(&env, &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "conformance-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let answer = session.request(1, "initialize", json!({"_meta": meta}));
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    // A dual-era client falls back to a full initialize: still served.
    let answer = session.request(2, "initialize", initialize_params("2025-06-18"));
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18", "{answer}");
}

#[test]
fn mcp_proto_the_roots_list_request_has_empty_params_in_a_session() {
    let env = Env::new();
    let session = Session::initialized_with(&env, &[], json!({"roots": {}}));
    let question = session.next(PATIENCE).expect("the server asks roots/list");
    let id = question["id"].clone();
    assert_eq!(question, json!({"jsonrpc": "2.0", "id": id, "method": "roots/list", "params": {}}));
}

#[test]
fn mcp_proto_the_roots_list_input_request_has_empty_params_on_the_stateless_revision() {
    let env = Env::new();
    let mut session = Session::start_with(&env, &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
    });
    let params = json!({"name": "glob", "arguments": {"pattern": "*"}, "_meta": meta});
    let answer = session.request(2, "tools/call", params);
    let asked = &answer["result"]["inputRequests"]["roots"];
    assert_eq!(*asked, json!({"method": "roots/list", "params": {}}), "{answer}");
}

#[test]
fn mcp_proto_a_second_initialize_is_refused_and_the_session_goes_on() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let again = session.request(2, "initialize", initialize_params("2025-06-18"));
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert!(again["error"]["message"].as_str().is_some_and(|m| m.contains("already")), "{again}");
    session.assert_pings(3);
}

#[test]
fn mcp_proto_a_call_before_initialized_asks_no_roots_until_it_comes() {
    let env = Env::new();
    let mut session = Session::start_with(&env, &[]);
    let mut params = initialize_params("2025-06-18");
    params["capabilities"] = json!({"roots": {}});
    let answer = session.request(1, "initialize", params);
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18", "{answer}");
    session.send(2, "tools/call", json!({"name": "bash", "arguments": {"command": "echo early"}}));
    let quiet = session.next_line(std::time::Duration::from_millis(700));
    assert!(quiet.is_none(), "a server request before notifications/initialized: {quiet:?}");
    session
        .send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    let work = crate::common::mcp::file_uri(&env.work());
    crate::common::mcp::answer_roots_list(&mut session, &[work]);
    let (answer, _) = session.response(2);
    assert_eq!(answer["result"]["structuredContent"]["output"], "early", "{answer}");
}
