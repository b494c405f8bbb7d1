//! The output limit (issue item 1, CONTRACT §5): `IKIGAI_TOOLS_MAX_OUTPUT`
//! bounds what bash, file_read, glob and grep answer, and it bounds their
//! memory too. The peaks are the tool's own `ru_maxrss`, read from wait4.

mod common;
use common::procs;
use common::*;

use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const MIB: u64 = 1 << 20;
/// What a tool may hold beside its bounded output: code, libc, buffers.
const SLACK: u64 = 8 * MIB;

/// Starts the tool linked as `link` with `args` on stdin and `limit` as
/// IKIGAI_TOOLS_MAX_OUTPUT (None: the default). Its stdout is read on a
/// thread, so that the answer never blocks it.
fn start(
    env: &Env,
    link: &str,
    args: &Value,
    limit: Option<u64>,
) -> (Child, std::thread::JoinHandle<Vec<u8>>) {
    let mut cmd = procs::tool_command(&env.link(link), &env.work(), false);
    match limit {
        Some(n) => cmd.env("IKIGAI_TOOLS_MAX_OUTPUT", n.to_string()),
        None => cmd.env_remove("IKIGAI_TOOLS_MAX_OUTPUT"),
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the tool");
    child.stdin.take().expect("stdin").write_all(args.to_string().as_bytes()).expect("write args");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    (child, reader)
}

/// Waits up to `limit` for `child` to exit, without reaping it.
fn exits_within(child: &Child, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                child.id(),
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if r == 0 && unsafe { info.si_pid() } != 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
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
fn yes_peak(limit: Option<u64>) -> u64 {
    let env = Env::new();
    // A unique argument, so that a `yes` left running can be found and ended.
    let word = format!("ikigai-memory-test-{}", std::process::id());
    let command = format!("yes {word}");
    let (child, reader) = start(&env, "bash", &json!({ "command": command }), limit);
    std::thread::sleep(Duration::from_secs(3));
    procs::signal(&child, libc::SIGTERM);
    let stopped = exits_within(&child, Duration::from_secs(10));
    if !stopped {
        procs::signal(&child, libc::SIGKILL);
    }
    let reaped = procs::wait4(&child);
    let out = reader.join().expect("reader");
    let left = kill_leftovers(format!("yes\0{word}\0").as_bytes());
    let bound = limit.unwrap_or(16 * MIB) + SLACK;
    println!(
        "bash `yes` with IKIGAI_TOOLS_MAX_OUTPUT={}: peak RSS {:.1} MiB (bound {:.0} MiB), exit {:?} signal {:?}, \
         answer of {} bytes{}; yes processes left running: {left}",
        limit.map_or("(default)".to_owned(), |l| l.to_string()),
        reaped.max_rss as f64 / MIB as f64,
        bound as f64 / MIB as f64,
        reaped.code,
        reaped.signal,
        out.len(),
        if out.windows(7).any(|w| w == b"omitted") { ", with the omission line" } else { "" },
    );
    assert!(stopped, "the bash tool did not exit within 10 s of SIGTERM");
    assert!(reaped.max_rss < bound, "peak RSS {} bytes, bound {bound}", reaped.max_rss);
    reaped.max_rss
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
    let (child, reader) = start(&env, "file-read", &json!({"file_path": "big.txt"}), None);
    let reaped = procs::wait4(&child);
    let out = reader.join().expect("reader");
    let took = started.elapsed();
    let answer: Value = serde_json::from_slice(&out).expect("one JSON answer");
    let output = answer["output"].as_str().unwrap_or_default().as_bytes();
    let bound = 16 * MIB + SLACK;
    println!(
        "file_read of a 2 GiB file: peak RSS {:.1} MiB (bound {:.0} MiB), answer of {} bytes, {:.1} s",
        reaped.max_rss as f64 / MIB as f64,
        bound as f64 / MIB as f64,
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
