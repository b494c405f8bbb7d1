//! The SIGKILL trials of crash-safe writing (docs/TOOLS.md, "file_write and
//! file_edit"): a writing tool run with its arguments on stdin and killed
//! at a chosen moment, a calibration run that finds how long a write takes
//! and when its temporary file shows, and what a killed write left next to
//! its target. tests/crash_safety.rs and tests/full_file_edit.rs both kill
//! through this one harness.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::procs;

/// When a run is killed.
#[derive(Clone, Copy, Debug)]
pub enum Kill {
    Never,
    /// This long after the start.
    After(Duration),
    /// This long after a second name shows next to the target (the
    /// temporary file: the write has begun), or after the tool ended,
    /// whichever comes first.
    AfterWriteBegins(Duration),
}

/// Runs `tool` (its program, directory `dir` and environment set) with
/// `payload` on stdin and kills it with SIGKILL as `kill` says. Returns
/// its stdout and the time it took; a run never killed must exit 0.
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which clippy does not know
pub fn run_killed(
    tool: &mut Command,
    dir: &Path,
    payload: Arc<Vec<u8>>,
    kill: Kill,
) -> (Vec<u8>, Duration) {
    let mut child = tool
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the tool");
    let start = Instant::now();
    let mut stdin = child.stdin.take().expect("stdin");
    // A killed tool closes the pipe: EPIPE ends the writer.
    let writer = std::thread::spawn(move || drop(stdin.write_all(&payload)));
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    match kill {
        Kill::Never => {}
        Kill::After(delay) => {
            std::thread::sleep(delay);
            procs::signal(&child, libc::SIGKILL);
        }
        Kill::AfterWriteBegins(delay) => {
            while procs::names_in(dir).len() < 2 && !procs::has_exited(&child) {
                std::thread::sleep(Duration::from_micros(500));
            }
            std::thread::sleep(delay);
            procs::signal(&child, libc::SIGKILL);
        }
    }
    let reaped = procs::wait4(&child);
    let took = start.elapsed();
    writer.join().expect("writer");
    let out = reader.join().expect("reader");
    if matches!(kill, Kill::Never) {
        assert_eq!((reaped.code, reaped.signal), (Some(0), None), "an uninterrupted run");
    }
    (out, took)
}

/// One uninterrupted run, measured so that the kills can be spread over a
/// run and over its write.
pub struct Calibration {
    /// The run's stdout: its answer.
    pub out: Vec<u8>,
    /// How long the whole run took.
    pub length: Duration,
    /// When the temporary file showed next to the target, from the start.
    pub temp_seen: Option<Duration>,
}

impl Calibration {
    /// How long the write itself lasted: from the temporary file showing
    /// to the end of the run.
    pub fn write_window(&self) -> Duration {
        self.length.saturating_sub(self.temp_seen.unwrap_or_default())
    }
}

/// Runs `tool` on `payload` without a kill, watching `dir` (which holds
/// the target alone) for the temporary file.
pub fn calibrate(tool: &mut Command, dir: &Path, payload: Arc<Vec<u8>>) -> Calibration {
    let watched = dir.to_path_buf();
    let watching = Arc::new(AtomicBool::new(true));
    let still = Arc::clone(&watching);
    let watcher = std::thread::spawn(move || {
        let start = Instant::now();
        while still.load(Ordering::Relaxed) {
            if procs::names_in(&watched).len() > 1 {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    });
    let (out, length) = run_killed(tool, dir, payload, Kill::Never);
    watching.store(false, Ordering::Relaxed);
    let temp_seen = watcher.join().expect("watcher");
    Calibration { out, length, temp_seen }
}

/// Whether `name`, found next to `target` after a kill, is the tool's
/// temporary file (the only thing a killed write may leave behind):
/// `.NAME.ikigai-tmp-XXXXXX` (src/fs/temp_file.rs).
pub fn is_tool_temp(target: &str, name: &str) -> bool {
    name.strip_prefix(&format!(".{target}.ikigai-tmp-"))
        .is_some_and(|rest| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Every name next to `target` in `dir`; the tool's temporary files among
/// them are removed (a killed run may leave one; they must not pile up on
/// disk over a trial).
pub fn leftovers(dir: &Path, target: &str) -> Vec<String> {
    let names: Vec<String> = procs::names_in(dir).into_iter().filter(|n| n != target).collect();
    for name in names.iter().filter(|n| is_tool_temp(target, n)) {
        let _ = std::fs::remove_file(dir.join(name));
    }
    names
}
