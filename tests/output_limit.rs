//! The output limit (issue item 1, CONTRACT §5): `IKIGAI_TOOLS_MAX_OUTPUT`
//! bounds what bash, file_read, glob and grep answer, and it bounds their
//! memory too. The peaks are the tool's own `ru_maxrss`, read from wait4.

use crate::common;
use common::procs::{self, Measured};
use common::*;

use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const MIB: u64 = 1 << 20;
/// What a tool may hold beside its bounded output: code, libc, buffers.
const SLACK: u64 = 8 * MIB;

/// Starts the tool linked as `link` with `args` on stdin and `limit` as
/// IKIGAI_TOOLS_MAX_OUTPUT (None: the default), through the helper.
fn start(env: &Env, link: &str, args: &Value, limit: Option<u64>) -> Measured {
    let limit = limit.map(|l| l.to_string());
    Measured::start(
        &env.link(link),
        &env.work(),
        args.to_string().as_bytes(),
        &[("IKIGAI_TOOLS_MAX_OUTPUT", limit.as_deref())],
    )
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

/// Kills, by pid, the processes whose command line is exactly `cmdline`
/// (what a tool under test may have left running).
fn kill_leftovers(cmdline: &[u8]) -> usize {
    let mut killed = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        if std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == cmdline) {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed += 1;
        }
    }
    killed
}

/// `yes` through the bash tool for 3 s, then SIGTERM (a host's timeout):
/// the tool's peak memory stays under the limit plus a few MiB.
fn yes_peak(limit: Option<u64>) {
    let env = Env::new();
    // A unique argument, so that a `yes` left running can be found and ended
    // (unique per test too: the two cases run at the same time).
    let word = format!(
        "ikigai-memory-test-{}-{}",
        std::process::id(),
        limit.map_or("default".to_owned(), |l| l.to_string())
    );
    let run = start(&env, "bash", &json!({ "command": format!("yes {word}") }), limit);
    let pid = run.tool_pid();
    std::thread::sleep(Duration::from_secs(3));
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let stopped = run.ends_within(Duration::from_secs(10));
    if !stopped {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let report = run.finish();
    let left = kill_leftovers(format!("yes\0{word}\0").as_bytes());
    let bound = limit.unwrap_or(16 * MIB) + SLACK;
    println!(
        "bash `yes` with IKIGAI_TOOLS_MAX_OUTPUT={}: peak RSS {:.1} MiB (bound {:.0} MiB), ended by {:?}/{:?}, \
         answer of {} bytes; yes processes left running: {left}",
        limit.map_or("(default)".to_owned(), |l| l.to_string()),
        mib(report.reaped.max_rss),
        mib(bound),
        report.reaped.code,
        report.reaped.signal,
        report.stdout.len(),
    );
    assert!(stopped, "the bash tool did not exit within 10 s of SIGTERM");
    assert_eq!(report.reaped.signal, Some(libc::SIGTERM), "the tool ends by the signal it got");
    assert_eq!(left, 0, "the tool left `yes` running");
    assert!(
        report.reaped.max_rss < bound,
        "peak RSS {} bytes, bound {bound}",
        report.reaped.max_rss
    );
}

#[test]
fn yes_through_bash_stays_under_a_4_mib_limit() {
    yes_peak(Some(4 * MIB));
}

#[test]
fn yes_through_bash_stays_under_the_default_limit() {
    yes_peak(None);
}

/// A 2 GiB file read whole, with the default limit: the answer keeps the
/// head and the tail with one line between them, and the tool's peak
/// memory stays under the limit plus a few MiB. The file is sparse but
/// for 9 MiB of numbered lines at each end.
#[test]
fn a_2_gib_file_read_whole_stays_under_the_default_limit() {
    let env = Env::new();
    let free = procs::free_bytes(&env.work());
    if free < 5 << 30 {
        println!(
            "skipped: {} GiB free under {}, the test wants 5",
            free >> 30,
            env.work().display()
        );
        return;
    }
    let size: u64 = 2 << 30;
    let lines = |first: u64| -> Vec<u8> {
        (first..)
            .map(|i| format!("line {i:09}\n"))
            .take(9 * MIB as usize / 15)
            .collect::<String>()
            .into_bytes()
    };
    let (head, tail) = (lines(0), lines(1_000_000_000));
    let path = env.path("big.txt");
    let file = std::fs::File::create(&path).expect("create");
    file.write_all_at(&head, 0).expect("write head");
    file.write_all_at(&tail, size - tail.len() as u64).expect("write tail");
    file.set_len(size).expect("set_len");
    drop(file);

    let started = Instant::now();
    let report = start(&env, "file-read", &json!({"file_path": "big.txt"}), None).finish();
    let took = started.elapsed();
    let reaped = report.reaped;
    let answer: Value = serde_json::from_slice(&report.stdout).expect("one JSON answer");
    let output = answer["output"].as_str().unwrap_or_default().as_bytes();
    let bound = 16 * MIB + SLACK;
    println!(
        "file_read of a 2 GiB file: peak RSS {:.1} MiB (bound {:.0} MiB), answer of {} bytes, {:.1} s",
        mib(reaped.max_rss),
        mib(bound),
        output.len(),
        took.as_secs_f64()
    );
    assert_eq!((reaped.code, reaped.signal), (Some(0), None));
    assert!(reaped.max_rss < bound, "peak RSS {} bytes, bound {bound}", reaped.max_rss);
    assert!(output.len() as u64 <= 16 * MIB + 200, "answer of {} bytes", output.len());
    assert!(output.starts_with(&head[..MIB as usize]), "the head is kept");
    assert!(output.ends_with(&tail[tail.len() - MIB as usize..]), "the tail is kept");
    let marker_lines = output.split(|&b| b == b'\n').filter(|l| l.starts_with(b"[...")).count();
    assert_eq!(marker_lines, 1, "one line says what was left out");
}

/// What the measurement itself adds: a tool answering a trivial call.
#[test]
fn the_floor_of_the_measurement_is_a_few_mib() {
    let env = Env::new();
    let report = start(&env, "glob", &json!({"pattern": "none"}), None).finish();
    println!("glob answering a trivial call: peak RSS {:.1} MiB", mib(report.reaped.max_rss));
    assert_eq!(report.stdout, br#"{"output":"","count":0}"#);
    assert!(report.reaped.max_rss < SLACK, "peak RSS {} bytes", report.reaped.max_rss);
}

/// The answer CONTRACT §5 asks for, from the whole output: the first
/// `limit - limit/2` bytes, then the marker on a line of its own, then the
/// last `limit/2` bytes (no blank line when the tail starts a line).
fn bounded(whole: &[u8], limit: usize, marker: &str) -> Vec<u8> {
    let (head, tail) = (&whole[..limit - limit / 2], &whole[whole.len() - limit / 2..]);
    let mut out = head.to_vec();
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(marker.as_bytes());
    if !tail.starts_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(tail);
    out
}

fn limited(env: &Env, link: &str, limit: u64, args: Value) -> Value {
    let ran = env
        .cmd(link)
        .env("IKIGAI_TOOLS_MAX_OUTPUT", limit.to_string())
        .stdin(args.to_string())
        .run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    ran.json()
}

fn text(v: &Value) -> Vec<u8> {
    v["output"].as_str().unwrap_or_else(|| panic!("no output in {v}")).as_bytes().to_vec()
}

#[test]
fn bash_keeps_head_and_tail_around_one_marker_line() {
    let env = Env::new();
    let whole: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    let v = limited(&env, "bash", 100, json!({"command": "seq 1 1000"}));
    let omitted = whole.len() - 100;
    let mut want = bounded(whole.as_bytes(), 100, &format!("[... {omitted} bytes omitted ...]"));
    want.pop(); // the one trailing newline bash strips
    assert_eq!(String::from_utf8_lossy(&text(&v)), String::from_utf8_lossy(&want));
    assert_eq!(v["exit_code"], 0);
}

#[test]
fn file_read_keeps_head_and_tail_and_says_where_to_continue() {
    let env = Env::new();
    let whole: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    env.write("nums.txt", &whole);
    // The line holding the first byte left out is where to continue.
    let continue_at = |part: &str, first_line: usize| first_line + part[..50].matches('\n').count();
    let v = limited(&env, "file-read", 100, json!({"file_path": "nums.txt"}));
    let marker = format!(
        "[... {} bytes omitted; continue with offset={} ...]",
        whole.len() - 100,
        continue_at(&whole, 1)
    );
    assert_eq!(
        v,
        json!({"output": String::from_utf8_lossy(&bounded(whole.as_bytes(), 100, &marker))})
    );

    let part: String = (10..510).map(|i| format!("{i}\n")).collect();
    let v = limited(
        &env,
        "file-read",
        100,
        json!({"file_path": "nums.txt", "offset": 10, "limit": 500}),
    );
    let marker = format!(
        "[... {} bytes omitted; continue with offset={} ...]",
        part.len() - 100,
        continue_at(&part, 10)
    );
    assert_eq!(
        v,
        json!({"output": String::from_utf8_lossy(&bounded(part.as_bytes(), 100, &marker))})
    );
}

#[test]
fn glob_and_grep_keep_head_and_tail_and_count_everything() {
    let env = Env::new();
    let names: Vec<String> = (1..=200).map(|i| format!("d/f{i:03}")).collect();
    for name in &names {
        env.write(name, "");
    }
    // Like bash, glob and grep bound their lines as a stream that ends in a
    // newline, and drop that one final newline.
    let stream =
        |lines: &[String]| lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes();
    let ending = |mut bytes: Vec<u8>| {
        assert_eq!(bytes.pop(), Some(b'\n'));
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let whole = stream(&names);
    let v = limited(&env, "glob", 100, json!({"pattern": "d/*"}));
    let marker = format!("[... {} bytes omitted ...]", whole.len() - 100);
    assert_eq!(v, json!({"output": ending(bounded(&whole, 100, &marker)), "count": 200}));

    env.write("nums.txt", (1..=1000).map(|i| format!("{i}\n")).collect::<String>());
    let lines: Vec<String> = (1..=100).map(|i| format!("nums.txt:{0}: {0}", i * 10)).collect();
    let whole = stream(&lines);
    let v = limited(&env, "grep", 100, json!({"pattern": "0$", "glob": "nums.txt"}));
    let marker = format!("[... {} bytes omitted ...]", whole.len() - 100);
    assert_eq!(v, json!({"output": ending(bounded(&whole, 100, &marker)), "count": 100}));
}

/// `0` lifts the limit: 20 MB (more than the default 16 MiB) come back whole.
#[test]
fn a_limit_of_0_keeps_everything() {
    let env = Env::new();
    let v = limited(&env, "bash", 0, json!({"command": "head -c 20000000 /dev/zero | tr '\\0' a"}));
    let output = v["output"].as_str().expect("output");
    assert_eq!(output.len(), 20_000_000);
    assert!(output.bytes().all(|b| b == b'a'));
}

/// A command that prints 300 MB and ends: the answer is built, and the
/// tool's peak stays under the limit plus a few MiB all the same.
#[test]
fn a_command_that_prints_300_mb_stays_under_the_default_limit() {
    let env = Env::new();
    let report = start(&env, "bash", &json!({"command": "yes | head -c 300000000"}), None).finish();
    let answer: Value = serde_json::from_slice(&report.stdout).expect("one JSON answer");
    let bound = 16 * MIB + SLACK;
    println!(
        "bash printing 300 MB: peak RSS {:.1} MiB (bound {:.0} MiB)",
        mib(report.reaped.max_rss),
        mib(bound)
    );
    assert_eq!(answer["exit_code"], 0);
    assert!(text(&answer).windows(35).any(|w| w == b"[... 283222784 bytes omitted ...]\ny"));
    assert!(
        report.reaped.max_rss < bound,
        "peak RSS {} bytes, bound {bound}",
        report.reaped.max_rss
    );
}
