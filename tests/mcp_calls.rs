//! How `ikigai-tools mcp` runs a call (docs/MCP.md, "How a call runs"): a
//! process forked by the spawner, a process of its own with its own group,
//! holding no descriptor of the server's or of another call's, answered
//! TOOL_CRASHED when it dies, stopped with the session; the spawner ends
//! with the server, and calls go on without it if it dies.

use crate::common;

use common::procs::{assert_gone_within, gone_within};
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::mcp::{pids_of, sleeper, unconfined, Session, PATIENCE};
use crate::common::memory_cage::MemoryCage;

/// A bash command that prints the tool process's pid and its parent's:
/// the shell's parent is the tool process.
const PARENTS: &str = "echo $PPID $(cut -d' ' -f4 /proc/$PPID/stat)";

/// The tool process's pid and its parent's, from a call of [`PARENTS`].
fn parents(session: &mut Session, id: i64) -> (i32, i32) {
    let answer = session.call(id, "bash", json!({"command": PARENTS}));
    let output = answer["result"]["structuredContent"]["output"].as_str().expect("output");
    let pids: Vec<i32> = output.split_whitespace().map(|p| p.parse().expect("a pid")).collect();
    (pids[0], pids[1])
}

#[test]
fn mcp_calls_a_call_process_is_forked_by_the_spawner_not_spawned_by_the_server() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let (tool, spawner) = parents(&mut session, 2);
    let (other_tool, same_spawner) = parents(&mut session, 3);
    assert_ne!(spawner, session.pid(), "the server spawned the call's process itself");
    assert_eq!(spawner, same_spawner, "one spawner forks every call");
    assert_ne!(tool, other_tool, "each call is a process of its own");
    // The spawner is the server's child.
    let stat = std::fs::read_to_string(format!("/proc/{spawner}/stat")).unwrap();
    assert_eq!(stat.split(' ').nth(3), Some(session.pid().to_string().as_str()), "{stat}");
    // And each call leads a process group of its own.
    let answer = session.call(4, "bash", json!({"command": "echo $PPID $(ps -o pgid= -p $PPID)"}));
    let output = answer["result"]["structuredContent"]["output"].as_str().unwrap().to_owned();
    let ids: Vec<&str> = output.split_whitespace().collect();
    assert_eq!(ids[0], ids[1], "{output}");
    // Named after its tool, as a link of that name would be.
    let answer = session.call(5, "bash", json!({"command": "cat /proc/$PPID/comm"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "bash", "exit_code": 0}));
}

#[test]
fn mcp_calls_a_call_process_killed_or_aborted_answers_tool_crashed_and_the_server_serves_on() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let (_, spawner) = parents(&mut session, 2);
    for (id, signal, name) in [(3, "KILL", "9 (SIGKILL)"), (4, "ABRT", "6 (SIGABRT)")] {
        let answer = session.call(id, "bash", json!({"command": format!("kill -{signal} $PPID")}));
        let text =
            format!("TOOL_CRASHED: the bash process was killed by signal {name} without an answer");
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], text);
    }
    // The same spawner forks the next call, which answers.
    let (_, after) = parents(&mut session, 5);
    assert_eq!(after, spawner);
    let answer = session.call(6, "bash", json!({"command": "echo still"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "still", "exit_code": 0}));
}

/// A call whose process runs out of memory takes only itself: in a memory
/// cgroup, the kernel's OOM killer kills the call's process (the largest,
/// keeping a flood of output, with no output limit), the call answers
/// TOOL_CRASHED, and the server and its spawner serve on.
#[test]
fn mcp_calls_a_call_process_killed_by_the_oom_killer_takes_only_its_call() {
    let cage = match MemoryCage::new(64 << 20) {
        Ok(cage) => cage,
        Err(why) => return skipped(&why),
    };
    let env = Env::new();
    let no_limit = [unconfined()[0], "--max-output".as_ref(), "0".as_ref()];
    let mut session = Session::initialized_with(&env, &no_limit, json!({}));
    let (_, spawner) = parents(&mut session, 2);
    cage.admit(session.pid());
    cage.admit(spawner);
    let answer = session.call(3, "bash", json!({"command": "yes | head -c 1G"}));
    let text = "TOOL_CRASHED: the bash process was killed by signal 9 (SIGKILL) without an answer";
    assert_eq!(answer["result"]["content"][0]["text"], text, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(cage.oom_kills(), 1, "the OOM killer killed the call's process, and only it");
    // The same server and spawner answer the next call.
    let (_, after) = parents(&mut session, 4);
    assert_eq!(after, spawner);
    let answer = session.call(5, "bash", json!({"command": "echo still"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "still", "exit_code": 0}));
    assert_eq!(session.end().code(), Some(0));
}

#[test]
fn mcp_calls_twenty_concurrent_calls_are_all_answered() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    for id in 2..22 {
        let command = format!("sleep 0.2; echo call {id}");
        session.send(id, "tools/call", json!({"name": "bash", "arguments": {"command": command}}));
    }
    let mut answered = BTreeSet::new();
    while answered.len() < 20 {
        let message = session.next(PATIENCE).expect("every call answered");
        let id = message["id"].as_i64().expect("a response");
        let expected = json!({"output": format!("call {id}"), "exit_code": 0});
        assert_eq!(message["result"]["structuredContent"], expected, "{message}");
        assert!(answered.insert(id), "answered twice: {id}");
    }
}

#[test]
fn mcp_calls_cancel_stops_the_call_process_group() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let pidfile = env.path("pids");
    session.send(2, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
    let pids = pids_of(&pidfile);
    session.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
            .to_string(),
    );
    assert_gone_within(&pids, PATIENCE);
    let answer = session.call(3, "bash", json!({"command": "echo next"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "next", "exit_code": 0}));
}

/// What the descriptors of the process `pid` point at, by number.
fn descriptors_of(pid: i32) -> Vec<(u32, String)> {
    let mut fds: Vec<(u32, String)> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let target = std::fs::read_link(entry.path()).unwrap();
            (entry.file_name().to_str().unwrap().parse().unwrap(), target.display().to_string())
        })
        .collect();
    fds.sort();
    fds
}

/// The parent of `pid`.
fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(") ").unwrap();
    rest.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn mcp_calls_a_call_process_holds_only_its_stdio_and_its_roots() {
    let env = Env::new();
    let root = env.mkdir("root");
    let mut session =
        Session::initialized_with(&env, &["--root".as_ref(), root.as_os_str()], json!({}));
    // Two calls running side by side: each holds its own pipes, and
    // neither the other's nor the spawner's or the server's descriptors.
    let mut tools = vec![];
    for id in [2, 3] {
        let pidfile = root.join(format!("pids{id}"));
        session.send(id, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
        // The shell's parent is the tool process.
        tools.push(parent_of(pids_of(&pidfile)[1]));
    }
    let real_root = std::fs::canonicalize(&root).unwrap().display().to_string();
    let server_stderr = std::fs::read_link(format!("/proc/{}/fd/2", session.pid())).unwrap();
    let spawner = parent_of(tools[0]);
    // Pipes and sockets of the server, of the spawner, and each call's stdio.
    let mut foreign: BTreeSet<String> = BTreeSet::new();
    for pid in [session.pid(), spawner] {
        foreign.extend(descriptors_of(pid).into_iter().map(|(_, t)| t));
    }
    foreign.retain(|t| t.starts_with("pipe:") || t.starts_with("socket:"));
    let stdio: Vec<Vec<String>> = tools
        .iter()
        .map(|&t| descriptors_of(t).into_iter().filter(|(n, _)| *n <= 1).map(|(_, t)| t).collect())
        .collect();
    // What the tool opens itself (as when run from the command line): its
    // root again, the pipes to its command, bash's signalfd. Nothing else
    // once its command runs; but it lets go of the sandbox it prepared (the
    // ruleset, the temporary directory, the namespace's socket) only when
    // the spawn returns, which on a loaded machine may come after the shell
    // wrote its pids: the descriptors are read once they have settled.
    let own = |n: u32, target: &str| {
        target.starts_with("pipe:[")
            || target == real_root
            || (n > 3 && target == "anon_inode:[signalfd]")
            || n == 2
    };
    let settled = |tool: i32| {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let fds = descriptors_of(tool);
            if fds.iter().all(|(n, t)| own(*n, t)) || Instant::now() > deadline {
                return fds;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    for (i, &tool) in tools.iter().enumerate() {
        let fds = settled(tool);
        let first: Vec<&(u32, String)> = fds.iter().filter(|(n, _)| *n <= 3).collect();
        assert_eq!(first.len(), 4, "{fds:?}");
        assert!(first[0].1.starts_with("pipe:["), "stdin: {fds:?}");
        assert!(first[1].1.starts_with("pipe:["), "stdout: {fds:?}");
        assert_eq!(first[2].1, server_stderr.display().to_string(), "stderr: {fds:?}");
        assert_eq!(first[3].1, real_root, "the root as descriptor 3: {fds:?}");
        // Nothing of the server's, the spawner's or the other call's.
        let other = &stdio[1 - i];
        for (n, target) in &fds {
            assert!(own(*n, target), "descriptor {n} -> {target}: {fds:?}");
            // The server holds the other end of the call's stdio pipes.
            let shared = foreign.contains(target) && !stdio[i].contains(target);
            assert!(
                !shared,
                "descriptor {n} -> {target} is the server's or the spawner's: {fds:?}"
            );
            assert!(
                !other.contains(target),
                "descriptor {n} -> {target} is the other call's: {fds:?}"
            );
        }
    }
}

#[test]
fn mcp_calls_closing_stdin_ends_every_call_process_and_the_spawner() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let (_, spawner) = parents(&mut session, 2);
    let mut pids = vec![spawner];
    for id in 3..6 {
        let pidfile = env.path(&format!("pids{id}"));
        session.send(id, "tools/call", json!({"name": "bash", "arguments": sleeper(&pidfile)}));
        pids.extend(pids_of(&pidfile));
    }
    assert_eq!(session.end().code(), Some(0));
    assert_gone_within(&pids, PATIENCE);
}

#[test]
fn mcp_calls_the_spawner_is_gone_with_a_killed_server() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let (_, spawner) = parents(&mut session, 2);
    kill(Pid::from_raw(session.pid()), Signal::SIGKILL).unwrap();
    assert!(gone_within(spawner, PATIENCE), "the spawner {spawner} outlived its server");
}

/// A server killed outright (SIGKILL, which it cannot handle) leaves no
/// call running: its spawner sees the server gone and stops every running
/// call's group, as a cancellation does. They ran on to their end before.
#[test]
fn mcp_calls_a_killed_server_leaves_no_call_running() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let (a, b) = (env.path("pids-a"), env.path("pids-b"));
    session.send(2, "tools/call", json!({"name": "bash", "arguments": sleeper(&a)}));
    session.send(3, "tools/call", json!({"name": "bash", "arguments": sleeper(&b)}));
    let pids: Vec<i32> = pids_of(&a).into_iter().chain(pids_of(&b)).collect();
    kill(Pid::from_raw(session.pid()), Signal::SIGKILL).unwrap();
    assert_gone_within(&pids, PATIENCE);
}

#[test]
fn mcp_calls_when_the_spawner_dies_calls_are_spawned_as_before() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    let (_, spawner) = parents(&mut session, 2);
    kill(Pid::from_raw(spawner), Signal::SIGKILL).unwrap();
    assert!(gone_within(spawner, PATIENCE));
    let (_, parent) = parents(&mut session, 3);
    assert_eq!(parent, session.pid(), "spawned by the server");
    let answer = session.call(4, "bash", json!({"command": "echo still"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"output": "still", "exit_code": 0}));
}

/// A call spawned anew once the spawner is gone runs with the settings a
/// forked one gets (profile, session, images, output limit, roots: one list
/// of them serves both), and stays confined to the roots.
#[test]
fn mcp_calls_a_call_spawned_without_the_spawner_gets_the_forked_one_settings() {
    let env = Env::new();
    let root = env.mkdir("root");
    let outside = env.write("outside.txt", "no\n");
    let args: [&std::ffi::OsStr; 2] = ["--root".as_ref(), root.as_os_str()];
    let mut session = Session::initialized_with(&env, &args, json!({}));
    let settings =
        json!({"command": "env | grep ^IKIGAI_TOOLS_ | grep -v ^IKIGAI_TOOLS_ROOT_FDS= | sort"});
    let forked = session.call(2, "bash", settings.clone());
    let (_, spawner) = parents(&mut session, 3);
    kill(Pid::from_raw(spawner), Signal::SIGKILL).unwrap();
    assert!(gone_within(spawner, PATIENCE));
    let (_, parent) = parents(&mut session, 4);
    assert_eq!(parent, session.pid(), "spawned by the server");
    let spawned = session.call(5, "bash", settings);
    let output = forked["result"]["structuredContent"]["output"].as_str().unwrap();
    for name in ["PROFILE=full", "IMAGES=1", "MAX_OUTPUT=24000", "ROOTS=", "SESSION="] {
        assert!(output.contains(&format!("IKIGAI_TOOLS_{name}")), "{name} in {output}");
    }
    assert_eq!(spawned["result"]["structuredContent"], forked["result"]["structuredContent"]);
    let refused = session.call(6, "file_read", json!({"file_path": outside}));
    assert_eq!(
        refused["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED",
        "{refused}"
    );
}

/// On the stateless revision (2026-07-28) there is no session to keep the
/// client's roots in, and no `roots/list_changed` to say they changed: the
/// roots a call runs under are the ones its own request carries. A client
/// that seeds them in `inputResponses` is answered in one round; one that
/// does not is asked, every time, even right after a seeded call.
#[test]
fn mcp_calls_stateless_roots_are_the_request_own_seeded_in_one_round_never_reused() {
    let env = Env::new();
    let inside = env.write("r/a.txt", "hi\n");
    let outside = env.write("out.txt", "no\n");
    let root = inside.parent().unwrap().to_owned();
    let mut session = Session::start_with(&env, &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
    });
    let ask = json!({
        "resultType": "input_required",
        "inputRequests": {"roots": {"method": "roots/list", "params": {}}}
    });
    let read = |path: &std::path::Path| json!({"name": "file_read", "arguments": {"file_path": path}, "_meta": meta});
    let seeded = |path: &std::path::Path| {
        let mut params = read(path);
        params["inputResponses"] =
            json!({"roots": {"roots": [{"uri": format!("file://{}", root.display())}]}});
        params
    };
    let answer = session.request(2, "tools/call", read(&inside));
    assert_eq!(answer["result"], ask);
    let answer = session.request(3, "tools/call", seeded(&inside));
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["output"], "hi\n", "{answer}");
    let answer = session.request(4, "tools/call", seeded(&outside));
    assert_eq!(
        answer["result"]["structuredContent"]["error_code"], "PERMISSION_DENIED",
        "{answer}"
    );
    // The roots of request 3 are not this one's.
    let answer = session.request(5, "tools/call", read(&inside));
    assert_eq!(answer["result"], ask);
}
