//! file_edit: exact replacement, the order of checks, CRLF files, NUL
//! bytes, what is kept of the file, concurrent edits, and every error code
//! (docs/TOOLS.md, docs/SPEC.md).

use crate::common;
use common::*;

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

fn edit(env: &Env, path: &str, old: &str, new: &str) -> Value {
    env.call("file-edit", json!({"file_path": path, "old_string": old, "new_string": new}))
}

fn edit_all(env: &Env, path: &str, old: &str, new: &str) -> Value {
    env.call(
        "file-edit",
        json!({"file_path": path, "old_string": old, "new_string": new, "replace_all": true}),
    )
}

fn replaced(n: usize, name: &str) -> Value {
    let s = if n == 1 { "" } else { "s" };
    json!({"output": format!("Replaced {n} occurrence{s} in {name}"), "replacements": n})
}

fn error(message: &str, code: &str) -> Value {
    json!({"error": message, "error_code": code})
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

fn no_temp_files(dir: &Path) -> bool {
    fs::read_dir(dir)
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().contains(".ikigai-tmp-"))
}

#[test]
fn replaces_one_occurrence_and_names_the_file_by_its_basename() {
    let env = Env::new();
    env.write("etc/config.txt", "name = x\ndebug = false\nlevel = 2\n");
    assert_eq!(
        edit(&env, "etc/config.txt", "debug = false", "debug = true"),
        replaced(1, "config.txt")
    );
    assert_eq!(env.read("etc/config.txt"), b"name = x\ndebug = true\nlevel = 2\n");
    assert!(no_temp_files(&env.path("etc")));
}

#[test]
fn replace_all_replaces_every_occurrence() {
    let env = Env::new();
    env.write("f.c", "int a; int b; int c;\n");
    assert_eq!(edit_all(&env, "f.c", "int", "long"), replaced(3, "f.c"));
    assert_eq!(env.read("f.c"), b"long a; long b; long c;\n");
}

#[test]
fn occurrences_are_counted_left_to_right_without_overlap() {
    let env = Env::new();
    env.write("a.txt", "aaaaa");
    assert_eq!(
        edit(&env, "a.txt", "aa", "b"),
        error("String found 2 times, use replace_all to replace all", "NOT_UNIQUE")
    );
    assert_eq!(edit_all(&env, "a.txt", "aa", "b"), replaced(2, "a.txt"));
    assert_eq!(env.read("a.txt"), b"bba");
}

#[test]
fn an_empty_new_string_deletes_the_match() {
    let env = Env::new();
    env.write("f.txt", "keep DELETE keep");
    assert_eq!(edit(&env, "f.txt", " DELETE", ""), replaced(1, "f.txt"));
    assert_eq!(env.read("f.txt"), b"keep keep");
}

#[test]
fn more_than_one_match_without_replace_all_is_not_unique_and_untouched() {
    let env = Env::new();
    env.write("f.txt", "x x x");
    for flag in [json!(null), json!(false)] {
        let args = json!({"file_path": "f.txt", "old_string": "x", "new_string": "y", "replace_all": flag});
        assert_eq!(
            env.call("file-edit", args),
            error("String found 3 times, use replace_all to replace all", "NOT_UNIQUE")
        );
    }
    assert_eq!(env.read("f.txt"), b"x x x");
}

#[test]
fn no_match_is_not_found_and_untouched() {
    let env = Env::new();
    env.write("f.txt", "hello\n");
    assert_eq!(edit(&env, "f.txt", "absent", "y"), error("String not found in file", "NOT_FOUND"));
    assert_eq!(env.read("f.txt"), b"hello\n");
}

#[test]
fn replace_all_without_a_match_succeeds_with_zero_and_leaves_the_file_alone() {
    let env = Env::new();
    let p = env.write("f.txt", "hello\n");
    let before = fs::metadata(&p).unwrap();
    assert_eq!(edit_all(&env, "f.txt", "absent", "y"), replaced(0, "f.txt"));
    let after = fs::metadata(&p).unwrap();
    assert_eq!(env.read("f.txt"), b"hello\n");
    // Not even rewritten: same inode, same modification time.
    assert_eq!(
        (after.ino(), after.mtime_nsec(), after.mtime()),
        (before.ino(), before.mtime_nsec(), before.mtime())
    );
}

#[test]
fn argument_checks_come_first_empty_then_identical() {
    let env = Env::new();
    // The file does not exist: the argument errors still come first.
    assert_eq!(
        edit(&env, "missing.txt", "", ""),
        error("old_string cannot be empty", "INVALID_ARG")
    );
    assert_eq!(
        edit(&env, "missing.txt", "", "x"),
        error("old_string cannot be empty", "INVALID_ARG")
    );
    assert_eq!(
        edit(&env, "missing.txt", "same", "same"),
        error("old_string and new_string are identical", "INVALID_ARG")
    );
    assert_eq!(
        edit(&env, "missing.txt", "a", "b"),
        error(
            &format!("File not found: missing.txt{}", env.looked_for("missing.txt")),
            "FILE_NOT_FOUND"
        )
    );
}

#[test]
fn missing_or_mistyped_arguments_are_invalid_arg() {
    let env = Env::new();
    env.write("f.txt", "x");
    for (args, message) in [
        (json!({"old_string": "a", "new_string": "b"}), "missing required parameter: file_path"),
        (
            json!({"file_path": "f.txt", "new_string": "b"}),
            "missing required parameter: old_string",
        ),
        (
            json!({"file_path": "f.txt", "old_string": "a"}),
            "missing required parameter: new_string",
        ),
        (
            json!({"file_path": "f.txt", "old_string": "x", "new_string": "b", "replace_all": "yes"}),
            "parameter replace_all must be a boolean",
        ),
    ] {
        assert_eq!(env.call("file-edit", args), error(message, "INVALID_ARG"));
    }
    assert_eq!(env.read("f.txt"), b"x");
}

#[test]
fn file_errors_have_their_codes() {
    let env = Env::new();
    env.mkdir("dir");
    env.write("plain.txt", "x");
    // The seed's message, then why.
    assert_eq!(
        edit(&env, "dir", "a", "b"),
        error("Failed to read file: dir (it is a directory)", "READ_FAILED")
    );
    assert_eq!(
        edit(&env, "plain.txt/inner", "a", "b"),
        error(
            "Cannot open file: plain.txt/inner (a part of the path is not a directory)",
            "OPEN_FAILED"
        )
    );
    assert_eq!(
        edit(&env, "/dev/null", "a", "b"),
        error(
            "Cannot get file size: /dev/null (a character device, not a regular file)",
            "SIZE_FAILED"
        )
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let env = Env::new();
    nix::unistd::mkfifo(&env.path("pipe"), nix::sys::stat::Mode::from_bits_truncate(0o644))
        .unwrap();
    let args = json!({"file_path": "pipe", "old_string": "a", "new_string": "b"});
    let ran = env.cmd("file-edit").stdin(args.to_string()).timeout(Duration::from_secs(20)).run();
    assert_eq!(
        ran.json(),
        error(
            "Cannot get file size: pipe (a FIFO (named pipe), not a regular file)",
            "SIZE_FAILED"
        )
    );
    assert!(ran.elapsed < Duration::from_secs(10), "took {:?}", ran.elapsed);
}

#[test]
fn unreadable_or_read_only_files_are_permission_denied_and_untouched() {
    let env = Env::new();
    let dir = env.mkdir("open");
    chmod(&dir, 0o777);
    let none = env.write("open/none.txt", "old");
    chmod(&none, 0o000);
    let read_only = env.write("open/ro.txt", "old");
    chmod(&read_only, 0o444);
    // Its own read-only file: the owner would be kept, yet it is not writable.
    let own = env.write("open/own_ro.txt", "old");
    std::os::unix::fs::chown(&own, Some(65534), Some(65534)).ok();
    chmod(&own, 0o444);
    for name in ["none.txt", "ro.txt", "own_ro.txt"] {
        let path = format!("open/{name}");
        let args = json!({"file_path": path, "old_string": "old", "new_string": "new"});
        let ran = env.cmd("file-edit").stdin(args.to_string()).as_nobody().run();
        let denied = format!("Permission denied: {path}{}", env.resolved_to(&path));
        assert_eq!(ran.json(), error(&denied, "PERMISSION_DENIED"));
        // Readable again, for a test that does not run as root.
        chmod(&env.path(&path), 0o644);
        assert_eq!(env.read(&path), b"old");
    }
    assert!(no_temp_files(&dir));
}

#[test]
fn nul_bytes_are_matched_like_any_other() {
    let env = Env::new();
    env.write("bin.dat", b"a\0b\0c\0b\0");
    assert_eq!(edit(&env, "bin.dat", "\0b\0c", "-"), replaced(1, "bin.dat"));
    assert_eq!(env.read("bin.dat"), b"a-\0b\0");
    assert_eq!(edit_all(&env, "bin.dat", "\0", ""), replaced(2, "bin.dat"));
    assert_eq!(env.read("bin.dat"), b"a-b");
}

#[test]
fn invalid_utf8_around_the_match_is_kept_byte_for_byte() {
    let env = Env::new();
    env.write("latin1.txt", b"caf\xe9 = 1\n\xff\xfe\n");
    assert_eq!(edit(&env, "latin1.txt", "= 1", "= 2"), replaced(1, "latin1.txt"));
    assert_eq!(env.read("latin1.txt"), b"caf\xe9 = 2\n\xff\xfe\n");
}

#[test]
fn crlf_files_match_lf_line_breaks_and_keep_their_crlf() {
    let env = Env::new();
    env.write("dos.txt", "one\r\ntwo\r\nthree\r\n");
    assert_eq!(edit(&env, "dos.txt", "one\ntwo\n", "1\n2\n"), replaced(1, "dos.txt"));
    assert_eq!(env.read("dos.txt"), b"1\r\n2\r\nthree\r\n");
    // As given, if it matches as given.
    assert_eq!(edit(&env, "dos.txt", "2\r\nthree", "3"), replaced(1, "dos.txt"));
    assert_eq!(env.read("dos.txt"), b"1\r\n3\r\n");
    // The retry counts too: two CRLF matches are not unique.
    env.write("twice.txt", "a\r\nb\r\na\r\nb\r\n");
    assert_eq!(
        edit(&env, "twice.txt", "a\nb", "c"),
        error("String found 2 times, use replace_all to replace all", "NOT_UNIQUE")
    );
    assert_eq!(edit_all(&env, "twice.txt", "a\nb", "c\nd"), replaced(2, "twice.txt"));
    assert_eq!(env.read("twice.txt"), b"c\r\nd\r\nc\r\nd\r\n");
    // Still nothing: NOT_FOUND.
    assert_eq!(edit(&env, "dos.txt", "1\n4", "x"), error("String not found in file", "NOT_FOUND"));
}

#[test]
fn lf_files_are_not_converted() {
    let env = Env::new();
    env.write("unix.txt", "one\ntwo\n");
    assert_eq!(edit(&env, "unix.txt", "one\ntwo", "1\n2"), replaced(1, "unix.txt"));
    assert_eq!(env.read("unix.txt"), b"1\n2\n");
}

#[test]
fn mode_owner_symlink_and_hard_links_are_kept() {
    let env = Env::new();
    let real = env.write("real.sh", "echo old\n");
    chmod(&real, 0o750);
    if is_root() {
        std::os::unix::fs::chown(&real, Some(65534), Some(65534)).unwrap();
    }
    std::os::unix::fs::symlink("real.sh", env.path("link.sh")).unwrap();
    assert_eq!(edit(&env, "link.sh", "old", "new"), replaced(1, "link.sh"));
    assert_eq!(env.read("real.sh"), b"echo new\n");
    assert!(fs::symlink_metadata(env.path("link.sh")).unwrap().file_type().is_symlink());
    let meta = fs::metadata(&real).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o750);
    if is_root() {
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    }

    let a = env.write("a.txt", "first");
    fs::hard_link(&a, env.path("b.txt")).unwrap();
    assert_eq!(edit(&env, "a.txt", "first", "second"), replaced(1, "a.txt"));
    assert_eq!(env.read("b.txt"), b"second");
    assert_eq!(fs::metadata(&a).unwrap().nlink(), 2);
    assert!(no_temp_files(&env.work()));
}

#[test]
fn concurrent_edits_of_one_file_all_land() {
    const N: usize = 20;
    let env = Env::new();
    let lines: String = (0..N).map(|i| format!("line {i:02} old\n")).collect();
    env.write("shared.txt", &lines);
    let link = env.link("file-edit");
    let children: Vec<_> = (0..N)
        .map(|i| {
            let mut child = Command::new(&link)
                .current_dir(env.work())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let args = json!({
                "file_path": "shared.txt",
                "old_string": format!("line {i:02} old"),
                "new_string": format!("line {i:02} new"),
            });
            child.stdin.take().unwrap().write_all(args.to_string().as_bytes()).unwrap();
            child
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v, replaced(1, "shared.txt"), "edit {i}");
    }
    let want: String = (0..N).map(|i| format!("line {i:02} new\n")).collect();
    assert_eq!(String::from_utf8(env.read("shared.txt")).unwrap(), want);
    assert!(no_temp_files(&env.work()));
}

#[test]
fn shellclaw_dialect_error_exits_1_with_the_message_on_stderr() {
    let env = Env::new();
    env.write("f.txt", "abc");
    let ran =
        env.run_arg("file_edit", r#"{"file_path":"f.txt","old_string":"zzz","new_string":"y"}"#);
    assert_eq!(ran.code, Some(1));
    assert_eq!(ran.stderr, "String not found in file\n");
    assert_eq!(ran.json(), error("String not found in file", "NOT_FOUND"));
    let ran =
        env.run_arg("file_edit", r#"{"file_path":"f.txt","old_string":"b","new_string":"B"}"#);
    assert_eq!((ran.code, ran.stderr.as_str()), (Some(0), ""));
    assert_eq!(ran.json(), replaced(1, "f.txt"));
    assert_eq!(env.read("f.txt"), b"aBc");
}

#[test]
fn snapshots() {
    let env = Env::new();
    env.write("config.txt", "debug = false\nverbose = false\n");
    snap!("answer", edit_all(&env, "config.txt", "false", "true"));
    snap!("error_not_unique", edit(&env, "config.txt", "true", "on"));
}

#[test]
fn a_lock_held_past_the_wait_is_an_error_and_changes_nothing() {
    let env = Env::new();
    let path = env.write("f.txt", "debug = false\n");
    // Another program holds an exclusive lock on the file.
    let holder = nix::fcntl::Flock::lock(
        fs::File::open(&path).unwrap(),
        nix::fcntl::FlockArg::LockExclusive,
    )
    .unwrap();
    let ran = env
        .cmd("file-edit")
        .env("IKIGAI_TOOLS_LOCK_WAIT", "0.3")
        .stdin(
            json!({"file_path": "f.txt", "old_string": "false", "new_string": "true"}).to_string(),
        )
        .run();
    assert_eq!(
        ran.json(),
        error(
            "Failed to write file: f.txt (another edit kept it locked; nothing was changed, try again)",
            "WRITE_FAILED"
        )
    );
    assert_eq!(env.read("f.txt"), b"debug = false\n");
    // Once the lock is released, the same edit goes through.
    drop(holder);
    assert_eq!(edit(&env, "f.txt", "false", "true"), replaced(1, "f.txt"));
}

// ---- Regression tests, issue 8 ----

#[test]
fn replace_all_of_millions_of_one_byte_matches_stays_within_twice_the_file() {
    const MIB: u64 = 1 << 20;
    const SIZE: usize = 2 << 20;
    let env = Env::new();
    // What the tool holds beside the file: the program (measured), buffers.
    let slack = common::procs::Measured::floor(&env) + 2 * MIB;
    env.write("a.txt", vec![b'a'; SIZE]);
    let args =
        json!({"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true});
    let run = common::procs::Measured::start(
        &env.link("file-edit"),
        &env.work(),
        args.to_string().as_bytes(),
        &[],
    );
    let report = run.finish();
    let peak = report.reaped.max_rss;
    println!(
        "replace_all of {SIZE} one-byte matches: peak RSS {:.1} MiB (bound {:.0} MiB)",
        peak as f64 / MIB as f64,
        (2 * SIZE as u64 + slack) as f64 / MIB as f64
    );
    assert_eq!(report.reaped.code, Some(0));
    assert_eq!(serde_json::from_slice::<Value>(&report.stdout).unwrap(), replaced(SIZE, "a.txt"));
    assert!(env.read("a.txt").iter().all(|&b| b == b'b'));
    assert!(peak < 2 * SIZE as u64 + slack, "peak RSS {peak} bytes for a {SIZE}-byte file");
}

#[test]
fn a_file_larger_than_the_memory_limit_is_out_of_memory_not_an_abort() {
    let env = Env::new();
    // 256 MiB that take no disk (a hole), under a 100 MB address-space limit.
    let big = fs::File::create(env.path("big.txt")).unwrap();
    big.set_len(256 << 20).unwrap();
    let args = json!({"file_path": "big.txt", "old_string": "x", "new_string": "y"});
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v 100000 && exec \"$0\"")
        .arg(env.link("file-edit"))
        .current_dir(env.work())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(args.to_string().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()),
        (Some(0), String::new())
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        error("Memory allocation failed", "OUT_OF_MEMORY")
    );
    assert_eq!(fs::metadata(env.path("big.txt")).unwrap().len(), 256 << 20);
}

#[test]
fn a_file_whose_read_would_wait_is_read_failed_at_once() {
    if !is_root() {
        skipped("/proc/kmsg, a file whose reads wait, is readable only by root");
        return;
    }
    let env = Env::new();
    // Reading takes what the kernel log holds (as any reader of /proc/kmsg
    // does), then would wait for more.
    let args = json!({"file_path": "/proc/kmsg", "old_string": "a", "new_string": "b"});
    let ran = env.cmd("file-edit").stdin(args.to_string()).timeout(Duration::from_secs(10)).run();
    let answer = ran.json();
    if answer["error_code"] == "PERMISSION_DENIED" {
        skipped(&format!("/proc/kmsg is closed to root here (no CAP_SYSLOG): {answer}"));
        return;
    }
    assert_eq!(
        answer,
        error(
            "Failed to read file: /proc/kmsg (it has no data ready, and reading it would wait)",
            "READ_FAILED"
        )
    );
}

/// A break found by attack, for file_edit: `/proc/self/pagemap` (size 0, 256 GiB
/// of page table entries) was read whole before the string was looked for:
/// past any host's time limit (or memory). A file that reports no size is
/// read at most 64 MiB; one that goes on is `READ_FAILED` at once.
#[test]
fn proc_self_pagemap_is_read_failed_at_once() {
    let env = Env::new();
    let args = json!({"file_path": "/proc/self/pagemap", "old_string": "a", "new_string": "b"});
    // The harness's watchdog fails the test past 20 s (a host gives 30).
    let ran = env.cmd("file-edit").stdin(args.to_string()).timeout(Duration::from_secs(20)).run();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(
        ran.json(),
        json!({
            "error": "Failed to read file: /proc/self/pagemap (it reports no size and goes on \
                      past 64 MiB, the most read of such a file; nothing was changed)",
            "error_code": "READ_FAILED"
        })
    );
}
