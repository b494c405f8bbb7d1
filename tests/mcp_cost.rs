//! What an MCP call's process does not redo (docs/PERFORMANCE.md, "MCP
//! calls against the reference server"): what is the same for every call
//! is found once by the spawner, before it forks, and each call's process
//! inherits it. Seen with strace attached to the spawner, following its
//! forks; where strace is missing or cannot attach, the test says so.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::mcp::Session;
use crate::common::*;

/// The files the spawner reads once for every call: its argument area
/// (a call's process title) and the CPUs the regex engine counts.
const FOUND_ONCE: [&str; 4] =
    ["/proc/self/stat", "/proc/self/maps", "/proc/self/cgroup", "/sys/fs/cgroup"];

/// The spawner: the server's one child.
fn spawner_of(server: i32) -> i32 {
    let children = std::fs::read_to_string(format!("/proc/{server}/task/{server}/children"))
        .expect("the server's children");
    let pids: Vec<i32> = children.split_whitespace().map(|p| p.parse().unwrap()).collect();
    assert_eq!(pids.len(), 1, "the server has one child, the spawner: {pids:?}");
    pids[0]
}

#[test]
fn mcp_cost_a_call_process_reads_neither_its_title_area_nor_the_cgroup_files() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut session = Session::initialized(&env);
    let spawner = spawner_of(session.pid());
    let trace = env.beside("trace").join("strace.out");
    let strace = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat,openat2,open", "-o"])
        .arg(&trace)
        .args(["-p", &spawner.to_string()])
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut strace) = strace else {
        println!("skipped: strace is not installed (apt-get install strace)");
        return;
    };
    // strace writes nothing until a traced call is made: wait until the
    // spawner says it is traced.
    let started = Instant::now();
    let traced = loop {
        let status = std::fs::read_to_string(format!("/proc/{spawner}/status")).unwrap();
        let tracer = status.lines().find_map(|l| l.strip_prefix("TracerPid:")).unwrap_or("0");
        if tracer.trim() != "0" {
            break true;
        }
        if started.elapsed() > Duration::from_secs(10) || strace.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !traced {
        let _ = strace.kill();
        let output = strace.wait_with_output().unwrap();
        println!(
            "skipped: strace cannot attach to the spawner here: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return;
    }
    let path = env.work().to_str().unwrap().to_owned();
    let answer = session.call(2, "glob", json!({"pattern": "*", "path": path}));
    let found = env.path("a.txt").to_str().unwrap().to_owned();
    assert_eq!(answer["result"]["structuredContent"]["output"], json!(found), "{answer}");
    let answer = session.call(3, "file_read", json!({"file_path": env.path("a.txt")}));
    assert_eq!(answer["result"]["structuredContent"]["output"], json!("a\n"), "{answer}");
    // SIGINT: strace detaches and flushes its output.
    let strace_pid = nix::unistd::Pid::from_raw(i32::try_from(strace.id()).unwrap());
    nix::sys::signal::kill(strace_pid, nix::sys::signal::Signal::SIGINT).unwrap();
    strace.wait().unwrap();
    let lines = std::fs::read_to_string(&trace).unwrap();
    let calls: Vec<&str> =
        lines.lines().filter(|l| !l.starts_with(&format!("{spawner} "))).collect();
    assert!(
        calls.iter().any(|l| l.contains("/a.txt\"")),
        "the call processes were traced:\n{lines}"
    );
    let again: Vec<&&str> =
        calls.iter().filter(|l| FOUND_ONCE.iter().any(|file| l.contains(file))).collect();
    assert!(again.is_empty(), "a call's process read what the spawner found once: {again:#?}");
}

#[test]
fn mcp_cost_a_call_process_runs_an_anonymous_copy_of_the_binary_code() {
    let env = Env::new();
    let mut session = Session::initialized(&env);
    // The bash tool's process is the shell's parent: the call's process.
    let answer = session.call(2, "bash", json!({"command": "cat /proc/$PPID/maps"}));
    let maps = answer["result"]["structuredContent"]["output"].as_str().unwrap().to_owned();
    let binary = std::fs::canonicalize(binary()).unwrap();
    let binary = binary.to_str().unwrap();
    // Of the file, only the ends of its read-only mappings: no whole huge
    // page (2 MiB, aligned) is left in any.
    const HUGE_PAGE: u64 = 2 << 20;
    let holds_a_huge_page = |line: &str| {
        let range = line.split_whitespace().next().unwrap();
        let (start, end) = range.split_once('-').unwrap();
        let start = u64::from_str_radix(start, 16).unwrap();
        let end = u64::from_str_radix(end, 16).unwrap();
        start.next_multiple_of(HUGE_PAGE) + HUGE_PAGE <= end
    };
    let of_the_file: Vec<&str> = maps
        .lines()
        .filter(|l| l.ends_with(binary) && !l.split_whitespace().nth(1).unwrap().contains('w'))
        .filter(|l| holds_a_huge_page(l))
        .collect();
    assert!(
        of_the_file.is_empty(),
        "the call's process maps whole huge pages of {binary}'s read-only pages: {of_the_file:#?}"
    );
    // The code is there, anonymous: the spawner's copy.
    assert!(maps.lines().any(|l| l.contains(" r-xp ") && l.split_whitespace().count() == 5));
}
