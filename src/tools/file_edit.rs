//! file_edit: replaces exact text in a file (CONTRACT §4).
//!
//! - Exact byte matching over the whole file, NUL bytes included;
//!   occurrences counted left to right without overlap (memmem).
//! - Checks in this order: empty `old_string`, identical strings, the file,
//!   then the count (0 → NOT_FOUND unless `replace_all`, more than one
//!   without `replace_all` → NOT_UNIQUE).
//! - A file with CRLF line endings: an `old_string` with `\n` line breaks
//!   that matches nothing is tried again with them read as `\r\n`, and
//!   `new_string` converted alike.
//! - Concurrent edits of one file are serialised: each holds an exclusive
//!   flock on the file across read, replace and write, so none is lost.
//! - The file is written through `fs::atomic_write`.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use memchr::memmem;

use crate::error::ToolError;
use crate::fs::open::open_regular;
use crate::fs::{atomic_write, basename};
use crate::json::Field;
use crate::memory;
use crate::protocol::{Args, Outcome};

/// How long to wait for another edit of the same file: ours take
/// milliseconds to a second, but a hundred queued edits of a large file add
/// up. Past this the edit answers an error rather than go ahead unlocked
/// (which would lose an edit that answered success); it stays under the
/// 30 s a host gives a call. `IKIGAI_TOOLS_LOCK_WAIT` (seconds) changes it,
/// for hosts with another limit.
const LOCK_WAIT: Duration = Duration::from_secs(25);
const LOCK_WAIT_VAR: &str = "IKIGAI_TOOLS_LOCK_WAIT";

fn lock_wait() -> Duration {
    std::env::var(LOCK_WAIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(LOCK_WAIT, |s| Duration::from_secs_f64(s.min(86_400.0)))
}

pub fn run(args: &Args) -> Outcome {
    let path = args.required_path("file_path")?;
    let old = args.required_str("old_string")?;
    let new = args.required_str("new_string")?;
    let replace_all = args.optional_bool("replace_all")?.unwrap_or(false);
    if old.is_empty() {
        return Err(ToolError::InvalidArg("old_string cannot be empty".to_owned()));
    }
    if old == new {
        return Err(ToolError::InvalidArg("old_string and new_string are identical".to_owned()));
    }
    // Held until the edited file is in place; closing it releases the lock.
    let mut file = open_locked(path)?;
    let content = read_all(&mut file, path)?;
    let (old, new) = (old.as_bytes(), new.as_bytes());
    let mut count = memmem::find_iter(&content, old).count();
    let crlf;
    let (old, new) =
        if count == 0 && old.contains(&b'\n') && memmem::find(&content, b"\r\n").is_some() {
            crlf = (to_crlf(old), to_crlf(new));
            count = memmem::find_iter(&content, &crlf.0).count();
            (&crlf.0[..], &crlf.1[..])
        } else {
            (old, new)
        };
    if count == 0 && !replace_all {
        return Err(ToolError::NotFound);
    }
    if count > 1 && !replace_all {
        return Err(ToolError::NotUnique(count));
    }
    if count > 0 {
        atomic_write::write_parts(path, &replaced(&content, old, new, count))?;
    }
    drop(file);
    let plural = if count == 1 { "" } else { "s" };
    let output = format!("Replaced {count} occurrence{plural} in {}", basename(path));
    Ok(vec![
        ("output", Field::Text(output.into_bytes())),
        ("replacements", Field::Int(i64::try_from(count).unwrap_or(i64::MAX))),
    ])
}

/// Opens the file and takes an exclusive lock on it. A concurrent edit may
/// have renamed a new file over the path while we waited; a lock on the old
/// one guards nothing, so then the path is opened again.
fn open_locked(path: &str) -> Result<File, ToolError> {
    let deadline = Instant::now() + lock_wait();
    loop {
        let file = open_regular(path)?;
        match lock_until(&file, deadline) {
            Lock::Held if !same_file(path, &file) => continue,
            Lock::Held | Lock::Unsupported => return Ok(file),
            Lock::TimedOut => return Err(ToolError::EditLocked(path.to_owned())),
        }
    }
}

enum Lock {
    Held,
    /// Another process held it past the deadline.
    TimedOut,
    /// The file system has no locks (some network file systems): the edit
    /// goes ahead as an edit without the lock would.
    Unsupported,
}

/// Waits for an exclusive flock until `deadline`.
fn lock_until(file: &File, deadline: Instant) -> Lock {
    use nix::errno::Errno;
    let mut pause = Duration::from_millis(1);
    loop {
        // SAFETY: flock on a descriptor we own; it only takes a lock.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        match Errno::result(rc) {
            Ok(_) => return Lock::Held,
            Err(Errno::EWOULDBLOCK | Errno::EINTR) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(Errno::EWOULDBLOCK | Errno::EINTR) => return Lock::TimedOut,
            Err(_) => return Lock::Unsupported,
        }
    }
}

/// Whether `path` still names the open file.
fn same_file(path: &str, file: &File) -> bool {
    match (fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        // Gone or unreadable now: the next open reports it.
        _ => false,
    }
}

fn read_all(file: &mut File, path: &str) -> Result<Vec<u8>, ToolError> {
    let mut content = Vec::new();
    if let Ok(meta) = file.metadata() {
        // One byte more, so the read that finds the end needs no new room.
        memory::reserve(&mut content, usize::try_from(meta.len()).unwrap_or(0).saturating_add(1));
    }
    file.read_to_end(&mut content)
        .map_err(|e: io::Error| ToolError::from_io(&e, path, ToolError::ReadFailed))?;
    Ok(content)
}

/// `\n` line breaks as `\r\n` (those already preceded by `\r` stay).
fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    let mut prev = 0u8;
    for &b in text {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

/// `content` with its `count` non-overlapping occurrences of `old`
/// replaced by `new`, as the pieces to write one after the other: the
/// unchanged stretches are not copied.
fn replaced<'a>(content: &'a [u8], old: &[u8], new: &'a [u8], count: usize) -> Vec<&'a [u8]> {
    let mut parts = Vec::with_capacity(2 * count + 1);
    let mut last = 0;
    for pos in memmem::find_iter(content, old) {
        parts.push(&content[last..pos]);
        parts.push(new);
        last = pos + old.len();
    }
    parts.push(&content[last..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_conversion_leaves_existing_crlf_alone() {
        assert_eq!(to_crlf(b"a\nb\r\nc\n"), b"a\r\nb\r\nc\r\n");
        assert_eq!(to_crlf(b"\n\n"), b"\r\n\r\n");
    }

    #[test]
    fn replacement_is_left_to_right_without_overlap() {
        assert_eq!(replaced(b"aaaaa", b"aa", b"b", 2).concat(), b"bba");
        assert_eq!(replaced(b"x\0y\0", b"\0", b"", 2).concat(), b"xy");
    }
}
