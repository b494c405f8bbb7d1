//! file_read: whole files, line ranges, the output limit and every error
//! code the tool can give (docs/TOOLS.md; docs/SPEC.md, "Output limit"; docs/SPEC.md).

use crate::common;
use common::*;

use std::fs;
use std::time::Duration;

use serde_json::json;

fn read(env: &Env, args: serde_json::Value) -> serde_json::Value {
    env.call("file-read", args)
}

fn error(message: &str, code: &str) -> serde_json::Value {
    json!({"error": message, "error_code": code})
}

const FIVE_LINES: &str = "l1\nl2\nl3\nl4\nl5";

#[test]
fn whole_file_comes_back_byte_for_byte_crlf_included() {
    let env = Env::new();
    env.write("dos.txt", "one\r\ntwo\r\n\tthree \"quoted\"\r\n");
    assert_eq!(
        read(&env, json!({"file_path": "dos.txt"})),
        json!({"output": "one\r\ntwo\r\n\tthree \"quoted\"\r\n"})
    );
}

#[test]
fn empty_file_gives_empty_output() {
    let env = Env::new();
    env.write("empty.txt", "");
    assert_eq!(read(&env, json!({"file_path": "empty.txt"})), json!({"output": ""}));
    assert_eq!(read(&env, json!({"file_path": "empty.txt", "offset": 1})), json!({"output": ""}));
}

#[test]
fn absolute_paths_and_symlinks_are_read() {
    let env = Env::new();
    let target = env.write("real.txt", "real\n");
    std::os::unix::fs::symlink("real.txt", env.path("link.txt")).unwrap();
    assert_eq!(read(&env, json!({"file_path": target})), json!({"output": "real\n"}));
    assert_eq!(read(&env, json!({"file_path": "link.txt"})), json!({"output": "real\n"}));
}

#[test]
fn offset_and_limit_select_lines() {
    let env = Env::new();
    env.write("five.txt", FIVE_LINES);
    let cases = [
        (json!({"offset": 2, "limit": 2}), "l2\nl3\n"),
        (json!({"offset": 4}), "l4\nl5"),
        (json!({"offset": 5}), "l5"),
        (json!({"limit": 1}), "l1\n"),
        (json!({"offset": 0, "limit": 1}), "l1\n"),
        (json!({"offset": 1, "limit": 9}), FIVE_LINES),
        (json!({"offset": 2.0, "limit": 1.0}), "l2\n"),
        (json!({"offset": null, "limit": 2}), "l1\nl2\n"),
    ];
    for (mut args, want) in cases {
        args["file_path"] = json!("five.txt");
        assert_eq!(read(&env, args.clone()), json!({"output": want}), "{args}");
    }
}

#[test]
fn limit_zero_and_offset_past_the_end_give_empty_output() {
    let env = Env::new();
    env.write("five.txt", FIVE_LINES);
    for args in [
        json!({"file_path": "five.txt", "limit": 0}),
        json!({"file_path": "five.txt", "offset": 3, "limit": 0}),
        json!({"file_path": "five.txt", "offset": 6}),
        json!({"file_path": "five.txt", "offset": 100, "limit": 5}),
    ] {
        assert_eq!(read(&env, args.clone()), json!({"output": ""}), "{args}");
    }
}

#[test]
fn huge_offset_and_limit_values_are_past_the_end_not_errors() {
    let env = Env::new();
    env.write("five.txt", FIVE_LINES);
    // Sent as raw text: 18446744073709551615 does not fit an i64.
    for (text, want) in [
        (r#"{"file_path":"five.txt","offset":1e18}"#, ""),
        (r#"{"file_path":"five.txt","offset":18446744073709551615}"#, ""),
        (r#"{"file_path":"five.txt","offset":9223372036854775807,"limit":1}"#, ""),
        (r#"{"file_path":"five.txt","limit":18446744073709551615}"#, FIVE_LINES),
        (r#"{"file_path":"five.txt","offset":4,"limit":1e18}"#, "l4\nl5"),
    ] {
        let ran = env.run("file-read", text);
        assert_eq!(ran.code, Some(0), "{text}");
        assert_eq!(ran.json(), json!({"output": want}), "{text}");
    }
}

#[test]
fn negative_offset_or_limit_is_invalid_arg_naming_the_parameter() {
    let env = Env::new();
    env.write("five.txt", FIVE_LINES);
    assert_eq!(
        read(&env, json!({"file_path": "five.txt", "offset": -1})),
        error("parameter offset must be a non-negative integer", "INVALID_ARG")
    );
    assert_eq!(
        read(&env, json!({"file_path": "five.txt", "limit": -5})),
        error("parameter limit must be a non-negative integer", "INVALID_ARG")
    );
}

#[test]
fn wrong_types_and_missing_path_are_invalid_arg() {
    let env = Env::new();
    assert_eq!(
        read(&env, json!({})),
        error("missing required parameter: file_path", "INVALID_ARG")
    );
    assert_eq!(
        read(&env, json!({"file_path": "x", "offset": "3"})),
        error("parameter offset must be an integer", "INVALID_ARG")
    );
    assert_eq!(
        read(&env, json!({"file_path": "x", "limit": 1.5})),
        error("parameter limit must be an integer", "INVALID_ARG")
    );
}

#[test]
fn missing_file_is_file_not_found() {
    let env = Env::new();
    assert_eq!(
        read(&env, json!({"file_path": "missing.txt"})),
        error(
            &format!("File not found: missing.txt{}", env.looked_for("missing.txt")),
            "FILE_NOT_FOUND"
        )
    );
    // Checked before lines are counted: limit 0 does not hide it.
    assert_eq!(
        read(&env, json!({"file_path": "missing.txt", "limit": 0})),
        error(
            &format!("File not found: missing.txt{}", env.looked_for("missing.txt")),
            "FILE_NOT_FOUND"
        )
    );
}

#[test]
fn unreadable_file_is_permission_denied() {
    let env = Env::new();
    let p = env.write("secret.txt", "secret");
    let _unreadable = ModeGuard::set(&p, 0o000);
    let ran = env.cmd("file-read").stdin(r#"{"file_path":"secret.txt"}"#).as_nobody().run();
    let denied = format!("Permission denied: secret.txt{}", env.resolved_to("secret.txt"));
    assert_eq!(ran.json(), error(&denied, "PERMISSION_DENIED"));
}

#[test]
fn other_open_errors_are_open_failed() {
    let env = Env::new();
    env.write("plain.txt", "x");
    std::os::unix::fs::symlink("loop", env.path("loop")).unwrap();
    // ENOTDIR: a file used as a directory; ELOOP: a symlink to itself.
    assert_eq!(
        read(&env, json!({"file_path": "plain.txt/inner"})),
        error(
            "Cannot open file: plain.txt/inner (a part of the path is not a directory)",
            "OPEN_FAILED"
        )
    );
    assert_eq!(
        read(&env, json!({"file_path": "loop"})),
        error("Cannot open file: loop (too many levels of symbolic links)", "OPEN_FAILED")
    );
}

#[test]
fn directory_is_read_failed() {
    let env = Env::new();
    env.mkdir("sub");
    assert_eq!(
        read(&env, json!({"file_path": "sub"})),
        error("Failed to read file: sub (it is a directory)", "READ_FAILED")
    );
}

#[test]
fn fifo_is_refused_with_size_failed_without_blocking() {
    let env = Env::new();
    nix::unistd::mkfifo(&env.path("pipe"), nix::sys::stat::Mode::from_bits_truncate(0o644))
        .unwrap();
    for args in
        [json!({"file_path": "pipe"}), json!({"file_path": "pipe", "offset": 1, "limit": 1})]
    {
        let ran =
            env.cmd("file-read").stdin(args.to_string()).timeout(Duration::from_secs(20)).run();
        assert_eq!(
            ran.json(),
            error(
                "Cannot get file size: pipe (a FIFO (named pipe), not a regular file)",
                "SIZE_FAILED"
            )
        );
        // Opening a FIFO without a writer would block forever.
        assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
    }
}

#[test]
fn devices_and_sockets_are_refused_with_size_failed() {
    let env = Env::new();
    let _listener = std::os::unix::net::UnixListener::bind(env.path("sock")).unwrap();
    for (path, kind) in [
        ("/dev/zero", "a character device"),
        ("/dev/null", "a character device"),
        ("sock", "a socket"),
    ] {
        let ran = env.cmd("file-read").stdin(json!({"file_path": path}).to_string()).run();
        assert_eq!(
            ran.json(),
            error(
                &format!("Cannot get file size: {path} ({kind}, not a regular file)"),
                "SIZE_FAILED"
            )
        );
    }
}

#[test]
fn proc_files_of_unknown_size_are_read_to_the_end() {
    let env = Env::new();
    let v = read(&env, json!({"file_path": "/proc/self/status"}));
    let text = v["output"].as_str().unwrap();
    // /proc says its files are empty; the tool reads them to EOF anyway.
    assert!(text.starts_with("Name:\tfile-read\n"), "{text}");
    assert!(text.contains("\nPid:\t") && text.ends_with('\n'), "{text}");
}

#[test]
fn invalid_utf8_reads_back_as_replacement_character_and_control_bytes_are_kept() {
    let env = Env::new();
    // No NUL: a file with one is binary, told rather than shown
    // (tests/answers_file_answers.rs).
    env.write("bin.dat", b"ok\xff\xfe\x01end\n");
    assert_eq!(
        read(&env, json!({"file_path": "bin.dat"})),
        json!({"output": "ok\u{FFFD}\u{FFFD}\u{1}end\n"})
    );
    assert_eq!(
        read(&env, json!({"file_path": "bin.dat", "limit": 1})),
        json!({"output": "ok\u{FFFD}\u{FFFD}\u{1}end\n"})
    );
}

fn numbered_lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn limited(env: &Env, limit: &str, args: serde_json::Value) -> serde_json::Value {
    let ran =
        env.cmd("file-read").stdin(args.to_string()).env("IKIGAI_TOOLS_MAX_OUTPUT", limit).run();
    assert!(ran.stdout.len() <= 1024, "answer of {} bytes", ran.stdout.len());
    ran.json()
}

#[test]
fn output_limit_keeps_head_and_tail_and_says_where_to_continue() {
    let env = Env::new();
    let whole = numbered_lines(300);
    env.write("many.txt", &whole);
    // 30 counts as 1 KiB, the least there is.
    let want = answer::bounded(whole.as_bytes(), 1024, answer::continue_at(1));
    assert_eq!(
        limited(&env, "30", json!({"file_path": "many.txt"})),
        json!({"output": String::from_utf8(want).unwrap()})
    );
}

#[test]
fn output_limit_with_offset_counts_lines_from_the_offset() {
    let env = Env::new();
    env.write("many.txt", numbered_lines(300));
    let part: String = (4..204).map(|i| format!("line {i}\n")).collect();
    let want = answer::bounded(part.as_bytes(), 1024, answer::continue_at(4));
    assert_eq!(
        limited(&env, "1024", json!({"file_path": "many.txt", "offset": 4, "limit": 200})),
        json!({"output": String::from_utf8(want).unwrap()})
    );
}

/// A sparse file of 1 TiB: a few lines at the start, `END` at the end.
/// Reading all of it would take minutes; a bounded read takes milliseconds.
/// The lines `huge_sparse_file` begins with: more than the 8 KiB file_read
/// looks at for a NUL (the hole after them reads as NULs), so that it is
/// text.
const HUGE_HEAD_LINES: usize = 1200;

fn huge_sparse_file(env: &Env) -> u64 {
    use std::io::{Seek, SeekFrom, Write};
    const SIZE: u64 = 1 << 40;
    let mut f = fs::File::create(env.path("huge.log")).unwrap();
    f.write_all(numbered_lines(HUGE_HEAD_LINES).as_bytes()).unwrap();
    f.seek(SeekFrom::Start(SIZE - 4)).unwrap();
    f.write_all(b"END\n").unwrap();
    SIZE
}

#[test]
fn lines_of_a_huge_file_are_read_only_up_to_the_last_line_asked_for() {
    let env = Env::new();
    huge_sparse_file(&env);
    let ran = env
        .cmd("file-read")
        .stdin(r#"{"file_path":"huge.log","offset":10,"limit":11}"#)
        .timeout(Duration::from_secs(60))
        .run();
    let want: String = (10..=20).map(|i| format!("line {i}\n")).collect();
    assert_eq!(ran.json(), json!({"output": want}));
    assert!(ran.elapsed < Duration::from_secs(15), "took {:?}", ran.elapsed);
}

#[test]
fn whole_huge_file_reads_only_head_and_tail_within_the_limit() {
    let env = Env::new();
    let size = huge_sparse_file(&env);
    let ran = env
        .cmd("file-read")
        .stdin(r#"{"file_path":"huge.log"}"#)
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "40")
        .timeout(Duration::from_secs(60))
        .run();
    // What the limit keeps of the file's start and end (NUL bytes take six
    // bytes each in the answer); the middle is all NUL.
    let mut ends = numbered_lines(HUGE_HEAD_LINES).into_bytes();
    ends.extend_from_slice(&[0; 1024]);
    ends.extend_from_slice(b"END\n");
    let left_out_of_ends = size - ends.len() as u64;
    let marker = answer::continue_at(1);
    // The middle was skipped unseen: its lines are not known.
    let want = answer::bounded(&ends, 1024, |cut| {
        marker(&answer::Cut { omitted: cut.omitted + left_out_of_ends, lines: None, ..*cut })
    });
    assert_eq!(ran.json(), json!({"output": String::from_utf8(want).unwrap()}));
    assert!(ran.stdout.len() <= 1024, "answer of {} bytes", ran.stdout.len());
    // Memory and time bounded by the limit, not by the 1 TiB.
    assert!(ran.elapsed < Duration::from_secs(15), "took {:?}", ran.elapsed);
}

#[test]
fn shellclaw_dialect_error_exits_1_with_the_message_on_stderr() {
    let env = Env::new();
    let ran = env.run_arg("file_read", r#"{"file_path":"missing.txt"}"#);
    assert_eq!(ran.code, Some(1));
    let message = format!("File not found: missing.txt{}", env.looked_for("missing.txt"));
    assert_eq!(ran.stderr, format!("{message}\n"));
    assert_eq!(ran.json(), error(&message, "FILE_NOT_FOUND"));
    env.write("five.txt", FIVE_LINES);
    let ran = env.run_arg("file_read", r#"{"file_path":"five.txt","offset":5}"#);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(ran.json(), json!({"output": "l5"}));
}

#[test]
fn snapshots() {
    let env = Env::new();
    env.write("notes.md", "# Notes\n\n- first\n- second\n- third\n");
    snap!("answer_lines", read(&env, json!({"file_path": "notes.md", "offset": 3, "limit": 2})));
    snap!("error_not_found", env.redacted(read(&env, json!({"file_path": "missing.txt"}))));
}

/// Runs file_read under `ulimit -v` (KiB of address space) with `args` and
/// the limit off.
fn read_with_memory_of(env: &Env, kib: u64, args: serde_json::Value) -> Ran {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\""))
        .arg(env.link("file-read"))
        .current_dir(env.work())
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh");
    child.stdin.take().expect("stdin").write_all(args.to_string().as_bytes()).expect("write");
    let out = child.wait_with_output().expect("wait");
    use std::os::unix::process::ExitStatusExt;
    Ran {
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
        signal: out.status.signal(),
        elapsed: Duration::ZERO,
    }
}

/// With the limit off, a file larger than the memory the tool may have
/// (here `ulimit -v`) aborted the tool (SIGABRT, no answer); it is
/// OUT_OF_MEMORY, whole or in lines.
#[test]
fn a_file_larger_than_memory_with_the_limit_off_is_out_of_memory() {
    let env = Env::new();
    // Sparse: 512 MiB that take no disk, for a tool that may have 64 MiB;
    // text first, so that it is no binary file, which is not read.
    use std::io::Write;
    let file = fs::File::create(env.path("big.bin")).unwrap();
    (&file).write_all("text\n".repeat(2000).as_bytes()).unwrap();
    file.set_len(512 << 20).unwrap();
    let oom = error("Memory allocation failed", "OUT_OF_MEMORY");
    for args in [json!({"file_path": "big.bin"}), json!({"file_path": "big.bin", "offset": 1})] {
        let ran = read_with_memory_of(&env, 64 * 1024, args.clone());
        assert_eq!((ran.code, ran.signal), (Some(0), None), "{args}: {}", ran.stderr);
        assert_eq!(ran.json(), oom, "{args}");
    }
    // The same limit leaves room for a file that fits.
    env.write("small.txt", "fits\n");
    let ran = read_with_memory_of(&env, 64 * 1024, json!({"file_path": "small.txt"}));
    assert_eq!(ran.json(), json!({"output": "fits\n"}));
}

/// `/proc/kmsg` says it is a regular file of size 0 and its reads wait for
/// the kernel's next message: file_read blocked for ever. It answers at
/// once (what messages were waiting are read first).
#[test]
fn a_file_whose_reads_would_wait_is_read_failed_at_once() {
    if !is_root() {
        skipped("reading /proc/kmsg needs root");
        return;
    }
    let env = Env::new();
    let ran = env
        .cmd("file-read")
        .stdin(r#"{"file_path":"/proc/kmsg"}"#)
        .timeout(Duration::from_secs(10))
        .run();
    assert_eq!(
        ran.json(),
        error(
            "Failed to read file: /proc/kmsg (it has no data ready, and reading it would wait)",
            "READ_FAILED"
        )
    );
    // Files of /proc whose size says 0 but that do not wait are read whole.
    let ran = env.cmd("file-read").stdin(r#"{"file_path":"/proc/self/status"}"#).run();
    assert!(ran.json()["output"].as_str().is_some_and(|s| s.starts_with("Name:")));
}

/// What file_read says where it stopped reading a file that reports no
/// size, having read `read` bytes of it.
fn stopped_at(output: &str, read: u64) -> bool {
    let head = format!("[... stopped after {read} bytes, at line ");
    let tail = format!(
        ": the file reports no size (as /proc and /sys files do) and file_read reads at most \
         64 MiB of such a file; bash can read on from there (tail -c +{} FILE) ...]",
        read + 1
    );
    output
        .strip_prefix(&head)
        .and_then(|rest| rest.strip_suffix(&tail))
        .is_some_and(|line| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
}

/// A break found by attack: `/proc/self/pagemap` (size 0, 256 GiB of page table
/// entries) with an `offset` took 163 s, scanning for lines: past any
/// host's time limit. A file that reports no size is now read at most
/// 64 MiB, and the answer says where it stopped and how to read on.
#[test]
fn proc_self_pagemap_with_an_offset_answers_within_seconds() {
    let env = Env::new();
    for args in [
        json!({"file_path": "/proc/self/pagemap", "offset": 1_000_000_000}),
        json!({"file_path": "/proc/self/pagemap", "offset": 2}),
    ] {
        // The harness's watchdog fails the test past 20 s (a host gives 30).
        let ran =
            env.cmd("file-read").stdin(args.to_string()).timeout(Duration::from_secs(20)).run();
        assert_eq!(ran.code, Some(0), "{args}: {}", ran.stderr);
        let answer = ran.json();
        let output = answer["output"].as_str().expect("output");
        assert_eq!(answer.as_object().map(|o| o.len()), Some(1), "{args}: {answer}");
        // The offset is past the 64 MiB read: the answer is that line alone.
        assert!(stopped_at(output, 64 << 20), "{args}: {output:.300}");
    }
    // Its first line (binary entries: few newline bytes) runs past the
    // bound: what was read is kept as the output limit keeps it, the line
    // saying where reading stopped comes last, on its own line.
    let ran = env
        .cmd("file-read")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "65536")
        .stdin(json!({"file_path": "/proc/self/pagemap", "offset": 1, "limit": 1}).to_string())
        .timeout(Duration::from_secs(20))
        .run();
    assert!(ran.stdout.len() <= 65_536);
    let answer = ran.json();
    let output = answer["output"].as_str().expect("output");
    let last = output.rsplit('\n').next().unwrap_or_default();
    assert!(stopped_at(last, 64 << 20), "{last:.300}");
}

/// Files that report no size and are no larger than the bound are read as
/// before, whole and by lines (`/proc/kallsyms`, a few MB).
#[test]
fn a_sizeless_file_under_the_bound_is_read_whole_and_by_lines() {
    let env = Env::new();
    let Ok(kallsyms) = fs::read_to_string("/proc/kallsyms") else {
        return skipped("no /proc/kallsyms to read");
    };
    let lines: Vec<&str> = kallsyms.split_inclusive('\n').collect();
    let at = lines.len() - 3;
    let v = read(&env, json!({"file_path": "/proc/kallsyms", "offset": at, "limit": 2}));
    assert_eq!(v, json!({"output": lines[at - 1..at + 1].concat()}));
    let v = read(&env, json!({"file_path": "/proc/kallsyms", "offset": lines.len() + 1}));
    assert_eq!(v, json!({"output": ""}));
    let whole = env
        .cmd("file-read")
        .env("IKIGAI_TOOLS_MAX_OUTPUT", "0")
        .stdin(json!({"file_path": "/proc/kallsyms"}).to_string())
        .run();
    assert_eq!(whole.json(), json!({"output": kallsyms}));
}
