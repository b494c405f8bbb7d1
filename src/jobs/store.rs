//! One job's files, in its directory (named by its id) in the namespace:
//!
//! - `meta`: the command (its first `COMMAND_KEPT` bytes: what `job_list`
//!   shows is less), when it started, and `keep` (below), as JSON;
//! - `head`: the first `keep` bytes the command printed;
//! - `ring`: the latest `keep` bytes, the byte at position p at p % keep;
//! - `count`: how many bytes it printed in all and how many newlines they
//!   held (8 bytes each, little-endian, in one write), written after the
//!   bytes themselves: a reader that skips a dropped middle still names
//!   its lines;
//! - `cursor`: how far `job_output` has read (8 bytes); its time of change
//!   is the last read, which the time to live counts from;
//! - `exit`: how it ended, as JSON, written once by a rename;
//! - `lock`: held (flock) by the supervisor for as long as it lives: taken
//!   by the starter before the fork and shared with the supervisor, so
//!   there is no moment when a job is neither ended nor supervised. Free
//!   and no `exit`: the supervisor was killed (its guardian killed the
//!   command), and the job counts as ended by SIGKILL;
//! - `pid`: the supervisor's pid, for `job_kill`, which signals it only
//!   once the process is proven the job's supervisor (`control`);
//! - `input`: a job that reads input (`run_in_background`, `tty`): a FIFO,
//!   mode 0600, that only its supervisor reads and `job_write` writes
//!   (`input`); `input-closed` once `close_stdin` closed the command's stdin.
//!
//! Disk stays within 2 × `keep` however much the command prints, and a
//! reader that comes late gets the head, a count of the bytes that were
//! dropped, and the latest tail.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{FlockOperation, Mode, OFlags};
use serde_json::{json, Value};

use super::state::{self, Namespace};
use crate::error::ToolError;
use crate::limit::Bounded;

const META: &str = "meta";
const HEAD: &str = "head";
const RING: &str = "ring";
const COUNT: &str = "count";
const CURSOR: &str = "cursor";
const EXIT: &str = "exit";
const EXIT_TEMP: &str = "exit.tmp";
const LOCK: &str = "lock";
const PID: &str = "pid";
const INPUT: &str = "input";
const INPUT_CLOSED: &str = "input-closed";

/// The most kept of a job's head and of its tail each: the default output
/// limit.
pub const MAX_KEEP: u64 = crate::limit::DEFAULT_MAX_OUTPUT as u64;
/// The least: what ikigai reads of an answer, rounded up.
pub const MIN_KEEP: u64 = 64 * 1024;

/// The most of a command `meta` keeps, in bytes: more than `job_list`
/// shows, and a command of megabytes does not stay on disk for the time
/// to live.
pub const COMMAND_KEPT: usize = 4096;

/// A job's directory, open.
#[derive(Debug)]
pub struct Job {
    pub id: String,
    dir: OwnedFd,
    path: PathBuf,
}

/// What `meta` holds.
#[derive(Debug, Clone)]
pub struct Meta {
    pub command: String,
    /// Seconds since the epoch.
    pub started: u64,
    pub keep: u64,
}

/// How a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub exit_code: i64,
    /// Stopped at its `timeout`.
    pub timed_out: bool,
    /// Stopped by `job_kill`, its time to live, or its starter's end.
    pub killed: bool,
}

impl Job {
    /// Makes a new job's directory and files in `ns`, and takes its lock
    /// (see the module doc): made under a name that is not an id, filled,
    /// locked, then renamed to its id, so that no other call ever sees a
    /// job half made.
    /// With `input`, the job's `input` FIFO is made too.
    pub fn create(
        ns: &Namespace,
        command: &str,
        keep: u64,
        input: bool,
    ) -> io::Result<(Job, File)> {
        let id = state::new_id()?;
        let making = format!("{}{id}", state::UNFINISHED);
        rustix::fs::mkdirat(ns.fd(), making.as_str(), Mode::RWXU)?;
        let dir = rustix::fs::openat(
            ns.fd(),
            making.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let job = Job { path: ns.path().join(&id), id, dir };
        let made = (|| {
            // The lock first: a job being made whose lock is free was
            // abandoned (its starter killed), and `sweep_unfinished` removes it.
            let lock = job.create_file(LOCK)?;
            rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
            let command = cut_at_char(command, COMMAND_KEPT);
            let meta = json!({"command": command, "started": now_secs(), "keep": keep});
            job.create_file(META)?.write_all(meta.to_string().as_bytes())?;
            for name in [HEAD, RING, COUNT, CURSOR] {
                job.create_file(name)?;
            }
            if input {
                rustix::fs::mknodat(
                    &job.dir,
                    INPUT,
                    rustix::fs::FileType::Fifo,
                    Mode::RUSR | Mode::WUSR,
                    0,
                )?;
            }
            rustix::fs::renameat(ns.fd(), making.as_str(), ns.fd(), job.id.as_str())?;
            Ok(lock)
        })();
        match made {
            Ok(lock) => Ok((job, lock)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(ns.path().join(&making));
                Err(e)
            }
        }
    }

    /// Removes the jobs of `ns` whose making was abandoned (a starter
    /// killed while it made one): older than `after` (making one takes
    /// microseconds) and their lock free or not there yet.
    pub fn sweep_unfinished(ns: &Namespace, after: Duration) {
        for name in ns.unfinished() {
            let Ok(dir) = rustix::fs::openat(
                ns.fd(),
                name.as_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            ) else {
                continue;
            };
            let job = Job { id: name.clone(), path: ns.path().join(&name), dir };
            let old = rustix::fs::fstat(&job.dir).is_ok_and(|st| {
                let made = UNIX_EPOCH + Duration::from_secs(st.st_mtime.max(0).unsigned_abs());
                age(made) > after
            });
            let free = match job.open_file(LOCK, false) {
                Ok(lock) => rustix::fs::flock(&lock, FlockOperation::NonBlockingLockShared).is_ok(),
                Err(_) => true,
            };
            if old && free {
                job.remove();
            }
        }
    }

    /// The job `id` of the namespace: `JOB_NOT_FOUND` for an id that is
    /// not one, or not there.
    pub fn open(ns: &Namespace, id: &str) -> Result<Job, ToolError> {
        if !state::is_id(id) {
            return Err(ToolError::JobNotFound(id.to_owned()));
        }
        let dir = rustix::fs::openat(
            ns.fd(),
            id,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|_| ToolError::JobNotFound(id.to_owned()))?;
        Ok(Job { id: id.to_owned(), dir, path: ns.path().join(id) })
    }

    fn create_file(&self, name: &str) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(&self.dir, name, flags, Mode::RUSR | Mode::WUSR)?))
    }

    fn open_file(&self, name: &str, write: bool) -> io::Result<File> {
        let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
        let flags = access | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(&self.dir, name, flags, Mode::empty())?))
    }

    pub fn meta(&self) -> Option<Meta> {
        let mut text = String::new();
        self.open_file(META, false).ok()?.read_to_string(&mut text).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        Some(Meta {
            command: v["command"].as_str()?.to_owned(),
            started: v["started"].as_u64()?,
            keep: v["keep"].as_u64()?.clamp(MIN_KEEP, MAX_KEEP),
        })
    }

    /// The identities (device, inode) of the job's directory and of its
    /// lock: what its supervisor holds open.
    pub fn identity(&self) -> Option<((u64, u64), (u64, u64))> {
        let dir = rustix::fs::fstat(&self.dir).ok()?;
        let lock = rustix::fs::fstat(self.open_file(LOCK, false).ok()?).ok()?;
        Some(((dir.st_dev, dir.st_ino), (lock.st_dev, lock.st_ino)))
    }

    /// Whether the supervisor lives (holds the lock).
    pub fn supervised(&self) -> bool {
        let Ok(lock) = self.open_file(LOCK, false) else { return false };
        rustix::fs::flock(&lock, FlockOperation::NonBlockingLockShared).is_err()
    }

    pub fn write_pid(&self, pid: i32) -> io::Result<()> {
        self.create_file(PID)?.write_all(pid.to_string().as_bytes())
    }

    pub fn pid(&self) -> Option<i32> {
        let mut text = String::new();
        self.open_file(PID, false).ok()?.read_to_string(&mut text).ok()?;
        text.trim().parse().ok()
    }

    /// How it ended: `None` while it runs. A supervisor that died without
    /// saying (SIGKILL) took the command with it: ended by SIGKILL.
    pub fn ended(&self) -> Option<Ended> {
        if let Some(ended) = self.recorded_exit() {
            return Some(ended);
        }
        if self.supervised() {
            return None;
        }
        // It may have written `exit` and died between the two looks.
        self.recorded_exit().or(Some(Ended { exit_code: 128 + 9, timed_out: false, killed: true }))
    }

    fn recorded_exit(&self) -> Option<Ended> {
        let mut text = String::new();
        self.open_file(EXIT, false).ok()?.read_to_string(&mut text).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        Some(Ended {
            exit_code: v["exit_code"].as_i64()?,
            timed_out: v["timed_out"].as_bool().unwrap_or(false),
            killed: v["killed"].as_bool().unwrap_or(false),
        })
    }

    /// Writes how it ended, whole or not at all (a temporary file renamed):
    /// a reader never sees half of it. Not synced to disk: a machine that
    /// goes down takes its jobs with it, and a call that ends within the
    /// yield would pay milliseconds for a file removed at once.
    pub fn record_exit(&self, ended: Ended) -> io::Result<()> {
        let text = json!({
            "exit_code": ended.exit_code, "timed_out": ended.timed_out, "killed": ended.killed
        });
        let _ = rustix::fs::unlinkat(&self.dir, EXIT_TEMP, rustix::fs::AtFlags::empty());
        let mut temp = self.create_file(EXIT_TEMP)?;
        temp.write_all(text.to_string().as_bytes())?;
        rustix::fs::renameat(&self.dir, EXIT_TEMP, &self.dir, EXIT)?;
        Ok(())
    }

    /// Whether the job's directory is still the one at its name: one
    /// removed (by hand, or a new one in its place) can no longer be read
    /// nor stopped, so its supervisor stops the command.
    pub fn still_there(&self) -> bool {
        let (Ok(here), Ok(named)) = (rustix::fs::fstat(&self.dir), rustix::fs::lstat(&self.path))
        else {
            return false;
        };
        (here.st_dev, here.st_ino) == (named.st_dev, named.st_ino)
    }

    /// The job's `input` FIFO opened: by its supervisor to read (read and
    /// write, so that it never reads an end of file when a writer goes), by
    /// `job_write` to write without blocking (ENXIO while nobody reads it).
    pub fn open_input(&self, supervisor: bool) -> io::Result<File> {
        let access = if supervisor { OFlags::RDWR } else { OFlags::WRONLY | OFlags::NONBLOCK };
        let flags = access | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(File::from(rustix::fs::openat(&self.dir, INPUT, flags, Mode::empty())?))
    }

    /// The command's stdin was closed (`close_stdin`): said by a file, the
    /// FIFO removed.
    pub fn mark_input_closed(&self) {
        let _ = self.create_file(INPUT_CLOSED);
        let _ = rustix::fs::unlinkat(&self.dir, INPUT, rustix::fs::AtFlags::empty());
    }

    pub fn input_closed(&self) -> bool {
        self.open_file(INPUT_CLOSED, false).is_ok()
    }

    /// The same job, opened again (for a thread of its supervisor).
    pub fn try_clone(&self) -> io::Result<Job> {
        Ok(Job { id: self.id.clone(), dir: self.dir.try_clone()?, path: self.path.clone() })
    }

    /// Bytes printed so far.
    pub fn count(&self) -> u64 {
        self.open_file(COUNT, false).map_or(0, |f| read_u64(&f))
    }

    /// Bytes printed so far and the newlines among them, read at once.
    fn count_and_newlines(&self) -> Option<(u64, u64)> {
        let mut bytes = [0u8; 16];
        self.open_file(COUNT, false).ok()?.read_exact_at(&mut bytes, 0).ok()?;
        let (count, newlines) = bytes.split_at(8);
        Some((
            u64::from_le_bytes(count.try_into().ok()?),
            u64::from_le_bytes(newlines.try_into().ok()?),
        ))
    }

    /// How far `job_output` has read.
    pub fn cursor(&self) -> u64 {
        self.open_file(CURSOR, false).map_or(0, |f| read_u64(&f))
    }

    /// Moves the read position (and so the time of the last read).
    pub fn set_cursor(&self, at: u64) -> io::Result<()> {
        self.open_file(CURSOR, true)?.write_all_at(&at.to_le_bytes(), 0)
    }

    /// When the job was last read (or started): what its time to live
    /// counts from.
    pub fn last_read(&self) -> SystemTime {
        let cursor = self.open_file(CURSOR, false).and_then(|f| f.metadata()?.modified());
        cursor.unwrap_or_else(|_| SystemTime::now())
    }

    /// When it ended, for the expiry of an ended job nobody reads.
    pub fn ended_at(&self) -> Option<SystemTime> {
        self.open_file(EXIT, false).and_then(|f| f.metadata()?.modified()).ok()
    }

    /// Holds the reader's lock while it lives: two reads at once would
    /// both answer the same bytes.
    pub fn reading(&self) -> io::Result<File> {
        let cursor = self.open_file(CURSOR, false)?;
        rustix::fs::flock(&cursor, FlockOperation::LockExclusive)?;
        Ok(cursor)
    }

    /// Pushes what was printed from `from` on into `into` (the bytes
    /// dropped in the middle counted as omitted); where the output ends now.
    pub fn read_since(&self, from: u64, keep: u64, into: &mut Bounded) -> u64 {
        let counted = self.count_and_newlines();
        let count = counted.map_or_else(|| self.count(), |(count, _)| count);
        if from >= count {
            return count;
        }
        // The head: written once, never changed.
        if from < keep {
            let end = count.min(keep);
            if let Ok(head) = self.open_file(HEAD, false) {
                read_at(&head, from, end, into);
            }
        }
        if count <= keep {
            return count;
        }
        let Ok(ring) = self.open_file(RING, false) else { return count };
        let wanted = from.max(keep);
        let start = wanted.max(count - keep);
        // Bytes the answer would leave out anyway are not read.
        let skip = (start - wanted) + into.skippable(count - start);
        let first = wanted + skip;
        // The last byte dropped too, where the ring still holds it: what
        // the kept tail follows (a line's start, or not).
        let with_last = u64::from(first > wanted && first > count - keep);
        let mut bytes = Vec::new();
        read_ring(&ring, first - with_last, count, keep, &mut bytes);
        // The supervisor may have written over the oldest of them since:
        // those count as dropped too.
        let overwritten = self.count().saturating_sub(keep).saturating_sub(first - with_last);
        let overwritten = overwritten.min(bytes.len() as u64);
        let (last, bytes) = match (with_last, overwritten) {
            (1, 0) => (bytes.first().copied(), bytes.get(1..).unwrap_or_default()),
            _ => (None, bytes.get(overwritten as usize..).unwrap_or_default()),
        };
        let dropped = first - wanted + overwritten.saturating_sub(with_last);
        if dropped > 0 {
            // Their newlines: all of them, less those up to `wanted` and
            // those kept; known when nothing moved while this was read and
            // the read starts in the head (`job_output`'s first read).
            let newlines = match (counted, last) {
                (Some((total, newlines)), Some(last)) if from <= keep && self.count() == total => {
                    self.open_file(HEAD, false)
                        .ok()
                        .and_then(|head| {
                            let before = newlines_in(&head, 0, keep)?;
                            newlines.checked_sub(before + newlines_of(bytes))
                        })
                        .map(|n| (n, last))
                }
                _ => None,
            };
            match newlines {
                Some((n, last)) => into.skip_counted(dropped, n, last),
                None => into.skip(dropped),
            }
        }
        into.push(bytes);
        count
    }

    /// Opens the files the supervisor writes.
    pub fn writer(&self, keep: u64) -> io::Result<Writer> {
        Ok(Writer {
            head: self.open_file(HEAD, true)?,
            ring: self.open_file(RING, true)?,
            count: self.open_file(COUNT, true)?,
            total: 0,
            newlines: 0,
            keep,
        })
    }

    /// Removes the job's directory and everything in it.
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Where the supervisor writes what the command prints.
pub struct Writer {
    head: File,
    ring: File,
    count: File,
    total: u64,
    newlines: u64,
    keep: u64,
}

impl Writer {
    pub fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let keep = self.keep;
        let at = self.total;
        if at < keep {
            let n = usize::try_from(keep - at).unwrap_or(usize::MAX).min(bytes.len());
            self.head.write_all_at(&bytes[..n], at)?;
        }
        // Only the latest `keep` bytes of a chunk can stay in the ring.
        let len = bytes.len() as u64;
        let skip = len.saturating_sub(keep);
        let mut pos = at + skip;
        let mut rest = &bytes[skip as usize..];
        while !rest.is_empty() {
            let offset = pos % keep;
            let n = usize::try_from(keep - offset).unwrap_or(usize::MAX).min(rest.len());
            self.ring.write_all_at(&rest[..n], offset)?;
            pos += n as u64;
            rest = &rest[n..];
        }
        self.total = at + len;
        self.newlines += newlines_of(bytes);
        let mut counted = [0u8; 16];
        counted[..8].copy_from_slice(&self.total.to_le_bytes());
        counted[8..].copy_from_slice(&self.newlines.to_le_bytes());
        self.count.write_all_at(&counted, 0)
    }
}

/// What the supervisor drains from the command's pipe goes to the job's
/// files. A write that fails (a full disk) loses those bytes, not the job.
impl crate::process::pipes::Sink for Writer {
    fn take(&mut self, bytes: &[u8]) {
        let _ = self.append(bytes);
    }
}

fn read_u64(file: &File) -> u64 {
    let mut bytes = [0u8; 8];
    match file.read_exact_at(&mut bytes, 0) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => 0,
    }
}

/// Pushes the bytes of `file` from `from` to `to` into `into`, a piece at
/// a time.
fn read_at(file: &File, from: u64, to: u64, into: &mut Bounded) {
    let mut buf = vec![0u8; 256 * 1024];
    let mut at = from;
    while at < to {
        let n = usize::try_from(to - at).unwrap_or(usize::MAX).min(buf.len());
        match file.read_at(&mut buf[..n], at) {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                into.push(&buf[..n]);
                at += n as u64;
            }
        }
    }
}

fn newlines_of(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// The newlines of `file` from `from` to `to`, or `None` if it cannot be
/// read whole.
fn newlines_in(file: &File, from: u64, to: u64) -> Option<u64> {
    let mut buf = vec![0u8; 256 * 1024];
    let (mut at, mut newlines) = (from, 0);
    while at < to {
        let n = usize::try_from(to - at).unwrap_or(usize::MAX).min(buf.len());
        let n = file.read_at(&mut buf[..n], at).ok().filter(|&n| n > 0)?;
        newlines += newlines_of(&buf[..n]);
        at += n as u64;
    }
    Some(newlines)
}

/// The ring's bytes for positions `from` to `to` (at most `keep` of them).
fn read_ring(ring: &File, from: u64, to: u64, keep: u64, out: &mut Vec<u8>) {
    let mut pos = from;
    while pos < to {
        let offset = pos % keep;
        let n = (to - pos).min(keep - offset);
        let start = out.len();
        out.resize(start + n as usize, 0);
        if ring.read_exact_at(&mut out[start..], offset).is_err() {
            out.truncate(start);
            return;
        }
        pos += n;
    }
}

/// The first `max` bytes of `text` at most, cut between characters.
pub fn cut_at_char(text: &str, max: usize) -> &str {
    let mut cut = max.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}

pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// How long ago `t` was (zero for the future).
pub fn age(t: SystemTime) -> Duration {
    SystemTime::now().duration_since(t).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::Settings;

    fn namespace(dir: &std::path::Path) -> Namespace {
        let settings = Settings { state_dir: Some(dir.join("state")), ..Settings::default() };
        Namespace::open(&settings, None).unwrap()
    }

    /// What a reader from `from` gets, as text, with a limit above all
    /// that is kept.
    fn read(job: &Job, from: u64) -> (String, u64) {
        let mut out = Bounded::new(Some(4 * MIN_KEEP as usize));
        let end = job.read_since(from, MIN_KEEP, &mut out);
        (String::from_utf8(out.finish()).unwrap(), end)
    }

    #[test]
    fn the_head_and_the_latest_tail_are_kept_and_the_middle_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let ns = namespace(tmp.path());
        let (job, _lock) = Job::create(&ns, "x", MIN_KEEP, false).unwrap();
        let mut writer = job.writer(MIN_KEEP).unwrap();
        // Lines of a known text, in chunks of every size, past the ring
        // several times (a chunk larger than the ring too).
        let whole: String = (0..40_000).map(|i| format!("{i:07}\n")).collect();
        let bytes = whole.as_bytes();
        let mut at = 0;
        let mut size = 1;
        while at < bytes.len() {
            let n = size.min(bytes.len() - at);
            writer.append(&bytes[at..at + n]).unwrap();
            at += n;
            size = (size * 7 + 3) % 150_000 + 1;
        }
        assert_eq!(job.count(), bytes.len() as u64);
        let keep = MIN_KEEP as usize;
        let (text, end) = read(&job, 0);
        assert_eq!(end, bytes.len() as u64);
        // The tail follows bytes skipped unseen: it starts after its first
        // newline (a line of 8 bytes), as a cut line would.
        let dropped = bytes.len() - 2 * keep + 8;
        let expected = format!(
            "{}[... {dropped} bytes omitted ...]\n{}",
            &whole[..keep],
            &whole[whole.len() - keep + 8..]
        );
        if text != expected {
            let at = text.bytes().zip(expected.bytes()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "lengths {} and {}; first difference at {at}: {:?} / {:?}",
                text.len(),
                expected.len(),
                &text[at.saturating_sub(20)..(at + 60).min(text.len())],
                &expected[at.saturating_sub(20)..(at + 60).min(expected.len())]
            );
        }
        // From within the head, and from within the tail.
        assert!(read(&job, 10).0[..keep - 10] == whole[10..keep]);
        let late = bytes.len() as u64 - 100;
        assert!(read(&job, late).0 == whole[whole.len() - 100..]);
        assert_eq!(read(&job, bytes.len() as u64), (String::new(), bytes.len() as u64));
        // Disk: at most `keep` each.
        let size = |name: &str| std::fs::metadata(job.path.join(name)).unwrap().len();
        assert_eq!((size(HEAD), size(RING)), (MIN_KEEP, MIN_KEEP));
    }

    #[test]
    fn a_job_that_reads_input_has_a_fifo_only_its_user_may_open() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let tmp = tempfile::tempdir().unwrap();
        let ns = namespace(tmp.path());
        let (quiet, _lock) = Job::create(&ns, "x", MIN_KEEP, false).unwrap();
        assert!(!quiet.path.join(INPUT).exists());
        let (talked, _lock) = Job::create(&ns, "x", MIN_KEEP, true).unwrap();
        let meta = std::fs::symlink_metadata(talked.path.join(INPUT)).unwrap();
        assert!(meta.file_type().is_fifo());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        // Nobody reads it yet: a writer is told so at once (ENXIO), never blocked.
        assert_eq!(talked.open_input(false).unwrap_err().raw_os_error(), Some(libc::ENXIO));
        talked.mark_input_closed();
        assert!(talked.input_closed() && !talked.path.join(INPUT).exists());
    }

    #[test]
    fn a_commands_head_is_kept_cut_between_characters() {
        assert_eq!(cut_at_char("abc", 2), "ab");
        assert_eq!(cut_at_char("abc", 9), "abc");
        assert_eq!(cut_at_char("aé", 2), "a", "é is two bytes");
        let tmp = tempfile::tempdir().unwrap();
        let ns = namespace(tmp.path());
        let command = "é".repeat(COMMAND_KEPT);
        let (job, _lock) = Job::create(&ns, &command, MIN_KEEP, false).unwrap();
        assert_eq!(job.meta().unwrap().command, "é".repeat(COMMAND_KEPT / 2));
    }

    #[test]
    fn a_job_whose_making_was_abandoned_is_swept() {
        let tmp = tempfile::tempdir().unwrap();
        let ns = namespace(tmp.path());
        let (job, lock) = Job::create(&ns, "x", MIN_KEEP, false).unwrap();
        // As a starter killed after the lock, before the rename: a job
        // being made whose lock is free.
        let making = ns.path().join(format!("{}{}", state::UNFINISHED, "0".repeat(32)));
        std::fs::create_dir(&making).unwrap();
        std::fs::write(making.join(LOCK), "").unwrap();
        // And one being made now, its lock held.
        let live = ns.path().join(format!("{}{}", state::UNFINISHED, "1".repeat(32)));
        std::fs::create_dir(&live).unwrap();
        std::fs::write(live.join(LOCK), "").unwrap();
        let held = File::open(live.join(LOCK)).unwrap();
        rustix::fs::flock(&held, FlockOperation::LockExclusive).unwrap();
        Job::sweep_unfinished(&ns, Duration::from_secs(60));
        assert!(making.exists(), "too young to be abandoned");
        Job::sweep_unfinished(&ns, Duration::ZERO);
        assert!(!making.exists());
        assert!(live.exists());
        assert_eq!(ns.ids(), vec![job.id.clone()], "a made job is not swept");
        drop(lock);
    }

    #[test]
    fn an_exit_is_recorded_and_a_job_without_its_supervisor_ended_by_sigkill() {
        let tmp = tempfile::tempdir().unwrap();
        let ns = namespace(tmp.path());
        let (job, lock) = Job::create(&ns, "x", MIN_KEEP, false).unwrap();
        assert_eq!(job.ended(), None, "locked: supervised");
        drop(lock);
        assert_eq!(job.ended(), Some(Ended { exit_code: 137, timed_out: false, killed: true }));
        let ended = Ended { exit_code: 3, timed_out: true, killed: false };
        job.record_exit(ended).unwrap();
        assert_eq!(job.ended(), Some(ended));
        assert_eq!(ns.ids(), vec![job.id.clone()]);
        job.remove();
        assert!(ns.ids().is_empty());
        assert!(matches!(Job::open(&ns, &job.id), Err(ToolError::JobNotFound(_))));
    }
}
