//! The lock file_write and file_edit take on the file they change: an
//! exclusive `flock` on the target, held from before it is read (edit) or
//! written (write) until the new content is in place. Two changes of one
//! file are so serialised, whichever tools make them: an answer of success
//! is never silently undone by a change that started earlier.
//!
//! One behaviour: a change waits for the lock up to 25 s, then answers
//! `WRITE_FAILED` (`... another edit kept it locked; nothing was changed,
//! try again`) and changes nothing. `IKIGAI_TOOLS_LOCK_WAIT` (seconds)
//! changes the wait. A file system without locks (some network file
//! systems) is changed without one.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::error::ToolError;
use crate::fs::open::open_regular;

/// How long to wait for another change of the same file: ours take
/// milliseconds to a second, but a hundred queued edits of a large file add
/// up. Past this the change answers an error rather than go ahead unlocked
/// (which would lose a change that answered success); it stays under the
/// 30 s a host gives a call.
const LOCK_WAIT: Duration = Duration::from_secs(25);
const LOCK_WAIT_VAR: &str = "IKIGAI_TOOLS_LOCK_WAIT";

/// The longest pause between two tries.
const MAX_PAUSE: Duration = Duration::from_millis(20);

fn lock_wait() -> Duration {
    std::env::var(LOCK_WAIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(LOCK_WAIT, |s| Duration::from_secs_f64(s.min(86_400.0)))
}

/// An open file, locked while it lives (or not, where the file system has
/// no locks); dropping it releases the lock.
pub enum Locked {
    Held(Flock<File>),
    Unlocked(File),
}

impl std::ops::Deref for Locked {
    type Target = File;

    fn deref(&self) -> &File {
        match self {
            Locked::Held(lock) => lock,
            Locked::Unlocked(file) => file,
        }
    }
}

/// file_edit: opens the regular file at `path` for reading (the errors are
/// `open_regular`'s) and locks it.
pub fn for_edit(path: &str) -> Result<Locked, ToolError> {
    lock_path(path, || open_regular(path).map(Some))?
        .ok_or_else(|| ToolError::OpenFailed(path.to_owned()))
}

/// file_write: locks the regular file at `path` if there is one. Nothing
/// to lock (a new file, a device) or a file this process cannot open is
/// `None`: the write then goes ahead and reports what it meets.
pub fn for_write(path: &str) -> Result<Option<Locked>, ToolError> {
    lock_path(path, || Ok(open_to_lock(path)))
}

/// Opens `path` for nothing but the lock: for reading, else for writing (a
/// file we may write but not read). Never blocks (O_NONBLOCK: a FIFO put in
/// its place) and never truncates.
fn open_to_lock(path: &str) -> Option<File> {
    if !fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let open = |read: bool| {
        OpenOptions::new()
            .read(read)
            .write(!read)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
    };
    let file = open(true).or_else(|_| open(false)).ok()?;
    file.metadata().is_ok_and(|m| m.is_file()).then_some(file)
}

/// Opens with `open` and locks until the deadline. A change that held the
/// lock may have renamed a new file over the path while we waited; a lock
/// on the old file guards nothing, so then the path is opened again.
fn lock_path(
    path: &str,
    open: impl Fn() -> Result<Option<File>, ToolError>,
) -> Result<Option<Locked>, ToolError> {
    let deadline = Instant::now() + lock_wait();
    loop {
        let Some(file) = open()? else {
            return Ok(None);
        };
        match lock_until(file, deadline) {
            Ok(Locked::Held(lock)) if !same_file(path, &lock) => continue,
            Ok(locked) => return Ok(Some(locked)),
            Err(TimedOut) => return Err(ToolError::EditLocked(path.to_owned())),
        }
    }
}

/// Another process held the lock past the deadline.
struct TimedOut;

/// Waits for an exclusive flock on `file` until `deadline`. A try every
/// few milliseconds rather than a blocking wait: a blocking flock could
/// only be cut short by a signal.
fn lock_until(mut file: File, deadline: Instant) -> Result<Locked, TimedOut> {
    let mut pause = Duration::from_millis(1);
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => return Ok(Locked::Held(lock)),
            Err((back, Errno::EWOULDBLOCK | Errno::EINTR)) => {
                if Instant::now() >= deadline {
                    return Err(TimedOut);
                }
                file = back;
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_PAUSE);
            }
            // The file system has no locks: the change goes ahead as one
            // without the lock would.
            Err((back, _)) => return Ok(Locked::Unlocked(back)),
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
