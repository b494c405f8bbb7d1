//! Crash-safe writes (issue item 3, docs/TOOLS.md, "file_write and file_edit"):
//! file_write and file_edit are killed with SIGKILL at moments spread over
//! the whole length of a write of a 50 MiB file, 100 times each in the long
//! trials.
//! After every kill the target holds either the whole old or the whole new
//! content, never a mix or a truncation, and nothing but the tool's
//! recognisably named temporary file is left next to it. A normal run
//! leaves no temporary file at all.
//!
//! Old and new content differ in every line (`AAAA…A\n` against
//! `BBBB…B\n`), so any mix or cut shows. `IKIGAI_CRASH_TRIALS` sets the
//! number of kills per tool: 8 in `cargo test`, 100 in the `_long` twins
//! that `.ci/run` runs.

use crate::common;
use common::dispositions::with_default_stop_signals;
use common::fuzz::Length;
use common::procs;
use common::sigkill::{self, is_tool_temp, leftovers, Kill};
use common::*;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

/// 50 MiB (52,428,800 bytes) of 1 KiB lines.
const SIZE: usize = 50 << 20;
const LINE: usize = 1024;
const TARGET: &str = "f.txt";

fn content(letter: u8) -> Vec<u8> {
    let mut line = vec![letter; LINE - 1];
    line.push(b'\n');
    line.repeat(SIZE / LINE)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    Write,
    Edit,
}

impl Tool {
    fn link(self) -> &'static str {
        match self {
            Tool::Write => "file-write",
            Tool::Edit => "file-edit",
        }
    }

    /// The argument object that turns `from` into `to` (`A` or `B` lines).
    fn payload(self, to: u8) -> Vec<u8> {
        let from = if to == b'A' { b'B' } else { b'A' };
        match self {
            Tool::Write => {
                let mut line = vec![to; LINE - 1];
                line.extend_from_slice(b"\\n");
                let mut out = format!("{{\"file_path\":\"{TARGET}\",\"content\":\"").into_bytes();
                out.extend_from_slice(&line.repeat(SIZE / LINE));
                out.extend_from_slice(b"\"}");
                out
            }
            Tool::Edit => {
                let line = |c: u8| format!("{}\n", (c as char).to_string().repeat(LINE - 1));
                json!({"file_path": TARGET, "old_string": line(from), "new_string": line(to), "replace_all": true})
                    .to_string()
                    .into_bytes()
            }
        }
    }

    /// The answer of a run that is not interrupted.
    fn answer(self) -> serde_json::Value {
        match self {
            Tool::Write => {
                json!({"output": format!("Wrote {SIZE} bytes to {TARGET}"), "bytes": SIZE})
            }
            Tool::Edit => json!({
                "output": format!("Replaced {} occurrences in {TARGET}", SIZE / LINE),
                "replacements": SIZE / LINE,
            }),
        }
    }
}

/// The two contents and the two payloads, built once.
struct Material {
    old: Vec<u8>,
    new: Vec<u8>,
    /// Payload that writes the `A` content, and the `B` content.
    to_a: Arc<Vec<u8>>,
    to_b: Arc<Vec<u8>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    A,
    B,
}

/// What one killed run left behind.
struct Trial {
    kill: Kill,
    /// The kill came after the rename: the target holds the new content.
    changed: bool,
    temps: Vec<String>,
}

/// What the target holds: all of one content or the other, or a failure
/// that says how it is torn.
fn held(m: &Material, target: &Path) -> Result<Held, String> {
    let data = fs::read(target).map_err(|e| format!("target unreadable: {e}"))?;
    if data == m.old {
        Ok(Held::A)
    } else if data == m.new {
        Ok(Held::B)
    } else {
        let first_diff = data.iter().zip(&m.old).position(|(a, b)| a != b);
        Err(format!("torn target: {} bytes (old and new are {SIZE}), first byte off the old at {first_diff:?}", data.len()))
    }
}

/// One thread's share of the trials: calibrate (an uninterrupted run, its
/// length and when the temporary file shows), then kill at spread delays.
fn trials(
    tool: Tool,
    m: &Material,
    link: &Path,
    dir: &Path,
    count: usize,
    lane: usize,
) -> Vec<Result<Trial, String>> {
    let target = dir.join(TARGET);
    fs::write(&target, &m.old).expect("write old");
    let payload_for =
        |h: Held| if h == Held::A { Arc::clone(&m.to_b) } else { Arc::clone(&m.to_a) };
    let mut command = Command::new(link);
    command.current_dir(dir);

    let calibration = sigkill::calibrate(&mut command, dir, payload_for(Held::A));
    let window = calibration.write_window();
    let sigkill::Calibration { out, length, temp_seen } = calibration;
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out).expect("one JSON answer"),
        tool.answer()
    );
    assert_eq!(held(m, &target), Ok(Held::B));
    assert_eq!(
        leftovers(dir, TARGET),
        Vec::<String>::new(),
        "a normal run leaves nothing next to the target"
    );
    println!(
        "{} lane {lane}: one uninterrupted run takes {:.2} s; a new file shows after {:?}",
        tool.link(),
        length.as_secs_f64(),
        temp_seen
    );

    // Half the kills spread over the whole run (reading and parsing the
    // arguments, computing, writing, renaming), half over the write itself,
    // counted from the moment the new file shows: on a busy machine a
    // fixed delay would mostly miss that short window.
    let mut state = Held::B;
    (0..count)
        .map(|k| {
            // The last pair lands past the end of the run, so that even a
            // short trial reaches both sides of the rename: 10 % past it in
            // a long trial, twice the calibrated length in a short one, whose
            // few kills must not all land early on a machine slower now than
            // when it was calibrated.
            let overshoot = if count >= 20 { 1.1 } else { 2.0 };
            let frac = (k / 2) as f64 / ((count - 1) / 2).max(1) as f64 * overshoot;
            let kill = if k % 2 == 0 {
                Kill::After(length.mul_f64(frac))
            } else {
                Kill::AfterWriteBegins(window.mul_f64(frac))
            };
            sigkill::run_killed(&mut command, dir, payload_for(state), kill);
            let now = held(m, &target).map_err(|e| format!("after a kill {kill:?}: {e}"))?;
            let names = leftovers(dir, TARGET);
            if let Some(stray) = names.iter().find(|n| !is_tool_temp(TARGET, n)) {
                return Err(format!(
                    "after a kill {kill:?}: a stray file {stray:?} next to the target"
                ));
            }
            let changed = now != state;
            state = now;
            Ok(Trial { kill, changed, temps: names })
        })
        .collect()
}

fn kill_trials(tool: Tool, length: Length) {
    let total = length.count("IKIGAI_CRASH_TRIALS", 8, 100);
    let (old, new) = (content(b'A'), content(b'B'));
    let m = Material {
        to_a: Arc::new(tool.payload(b'A')),
        to_b: Arc::new(tool.payload(b'B')),
        old,
        new,
    };
    let env = Env::new();
    let link = env.link(tool.link());
    let lanes: Vec<PathBuf> = (0..2).map(|i| env.mkdir(&format!("lane{i}"))).collect();
    let start = Instant::now();
    let results: Vec<Result<Trial, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = lanes
            .iter()
            .enumerate()
            .map(|(i, dir)| {
                let (m, link) = (&m, &link);
                s.spawn(move || {
                    trials(tool, m, link, dir, total / 2 + (total % 2) * (1 - i.min(1)), i)
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("lane")).collect()
    });
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let done: Vec<&Trial> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let mid_write = done.iter().filter(|t| !t.temps.is_empty()).count();
    let became_new = done.iter().filter(|t| t.changed).count();
    let temp_names: std::collections::BTreeSet<&String> =
        done.iter().flat_map(|t| &t.temps).collect();
    let max_delay = done
        .iter()
        .filter_map(|t| match t.kill {
            Kill::After(d) => Some(d),
            _ => None,
        })
        .max()
        .unwrap_or_default();
    println!(
        "{}: {} kills (SIGKILL, half at 0..{:.2} s from the start, half inside the write) in {:.1} s: \
         {} torn or stray, {} killed mid-write (left a temporary file), {} after the rename; \
         temporary names seen: {:?}",
        tool.link(),
        results.len(),
        max_delay.as_secs_f64(),
        start.elapsed().as_secs_f64(),
        failures.len(),
        mid_write,
        became_new,
        temp_names.iter().take(3).collect::<Vec<_>>()
    );
    assert!(results.len() >= total);
    assert!(
        failures.is_empty(),
        "{} of {} kills broke the target:\n{:#?}",
        failures.len(),
        results.len(),
        failures
    );
    // The spread reached both sides of the rename: the test tested something.
    assert!(
        became_new > 0 && became_new < done.len(),
        "{became_new} of {} kills ended with the new content",
        done.len()
    );
    // After all that, a normal run still works: nothing stale blocks it.
    let dir = &lanes[0];
    let before = held(&m, &dir.join(TARGET)).expect("target");
    let payload = if before == Held::A { Arc::clone(&m.to_b) } else { Arc::clone(&m.to_a) };
    let (out, _) =
        sigkill::run_killed(Command::new(&link).current_dir(dir), dir, payload, Kill::Never);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out).expect("one JSON answer"),
        tool.answer()
    );
    assert_ne!(held(&m, &dir.join(TARGET)), Ok(before));
    assert_eq!(leftovers(dir, TARGET), Vec::<String>::new());
}

#[test]
fn file_write_killed_at_any_moment_leaves_old_or_new() {
    kill_trials(Tool::Write, Length::Short);
}

#[test]
#[ignore = "long trial (100 kills of a 50 MiB write, about 2 minutes), run by .ci/run"]
fn file_write_killed_at_any_moment_leaves_old_or_new_long() {
    kill_trials(Tool::Write, Length::Long);
}

#[test]
fn file_edit_killed_at_any_moment_leaves_old_or_new() {
    kill_trials(Tool::Edit, Length::Short);
}

#[test]
#[ignore = "long trial (100 kills of a 50 MiB write, about 2 minutes), run by .ci/run"]
fn file_edit_killed_at_any_moment_leaves_old_or_new_long() {
    kill_trials(Tool::Edit, Length::Long);
}

/// A normal run leaves nothing next to the target, for a new file, an
/// overwrite and an edit, small or large.
#[test]
fn a_normal_run_leaves_no_temporary_file() {
    let env = Env::new();
    let big = "x".repeat(5 << 20);
    for (name, content) in [("small.txt", "hello\n"), ("big.txt", big.as_str())] {
        for _ in 0..2 {
            let v = env.call("file-write", json!({"file_path": name, "content": content}));
            assert_eq!(
                v,
                json!({"output": format!("Wrote {} bytes to {name}", content.len()), "bytes": content.len()})
            );
        }
        let v = env.call(
            "file-edit",
            json!({"file_path": name, "old_string": content, "new_string": "edited\n"}),
        );
        assert_eq!(
            v,
            json!({"output": format!("Replaced 1 occurrence in {name}"), "replacements": 1})
        );
    }
    assert_eq!(procs::names_in(&env.work()), ["big.txt", "small.txt"]);
    assert_eq!(env.read("big.txt"), b"edited\n");
}

/// SIGTERM, SIGINT or SIGHUP (a host's timeout) in the middle of a write:
/// the tool removes its temporary file, then dies by that signal; the
/// target keeps its old content. To catch it mid-write every time, the
/// tool is stopped (SIGSTOP) as soon as its temporary file shows, sent the
/// signal, and continued.
#[test]
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which clippy does not know
fn a_stop_signal_mid_write_removes_the_temporary_file() {
    const SMALL: usize = 8 << 20;
    let env = Env::new();
    let link = env.link("file-write");
    let old = b"old content\n".to_vec();
    let mut line = "N".repeat(LINE - 1);
    line.push_str("\\n");
    let payload = Arc::new(
        format!("{{\"file_path\":\"{TARGET}\",\"content\":\"{}\"}}", line.repeat(SMALL / LINE))
            .into_bytes(),
    );
    for (sig, name) in
        [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT"), (libc::SIGHUP, "SIGHUP")]
    {
        let dir = env.mkdir(name);
        let target = dir.join(TARGET);
        let mut caught = false;
        for _ in 0..20 {
            fs::write(&target, &old).expect("write old");
            // The signal must reach a tool that heeds it, though `nohup
            // cargo test` or `cargo test &` started the suite ignoring it.
            let mut child = with_default_stop_signals(&mut Command::new(&link))
                .current_dir(&dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn");
            let mut stdin = child.stdin.take().expect("stdin");
            let input = Arc::clone(&payload);
            let writer = std::thread::spawn(move || drop(stdin.write_all(&input)));
            while procs::names_in(&dir).len() < 2 && !procs::has_exited(&child) {
                std::thread::sleep(Duration::from_micros(200));
            }
            procs::signal(&child, libc::SIGSTOP);
            let mid_write = procs::names_in(&dir).iter().any(|n| is_tool_temp(TARGET, n));
            if mid_write {
                procs::signal(&child, sig);
            }
            procs::signal(&child, libc::SIGCONT);
            let reaped = procs::wait4(&child);
            writer.join().expect("writer");
            if !mid_write {
                continue; // The write was over before the stop: try again.
            }
            caught = true;
            assert_eq!((reaped.code, reaped.signal), (None, Some(sig)), "{name}: killed by it");
            assert_eq!(procs::names_in(&dir), [TARGET], "{name}: nothing left but the target");
            assert_eq!(fs::read(&target).expect("target"), old, "{name}: the old content");
            break;
        }
        assert!(caught, "{name}: no run was caught in the middle of its write");
    }
}
