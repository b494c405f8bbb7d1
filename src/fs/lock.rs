//! The lock file_write and file_edit take on the file they change: an
//! exclusive `flock` on the target, held from before it is read (edit) or
//! written (write) until the new content is in place. Two changes of one
//! file are so serialised, whichever tools make them: an answer of success
//! is never silently undone by a change that started earlier.
//!
//! One behaviour: a change waits for the lock up to 25 s, then answers
//! `WRITE_FAILED` (`... another edit kept it locked; nothing was changed,
//! try again`) and changes nothing. `IKIGAI_TOOLS_LOCK_WAIT` (seconds)
//! changes the wait (read with the call's `Context`, which passes it here). A file system without locks (some network file
//! systems) is changed without one.

use std::fs::File;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use rustix::fs::{FileType, Mode, OFlags};

use crate::error::ToolError;
use crate::fs::open::checked_regular;
use crate::fs::target::Target;

/// The longest pause between two tries.
const MAX_PAUSE: Duration = Duration::from_millis(20);

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

/// file_edit: locks `opened`, the regular file at `path` opened for
/// reading. `target` is where the edit will be written: the lock must hold
/// the file it stands for; should another change have replaced that file
/// meanwhile (or `path` have led elsewhere a moment before), the target
/// is opened again, so that what is read is what will be written.
pub fn for_edit(
    path: &str,
    target: &Target,
    opened: File,
    wait: Duration,
) -> Result<Locked, ToolError> {
    let mut first = Some(opened);
    let open = || match first.take() {
        Some(file) => Ok(Some(file)),
        None => {
            let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
            let file = target
                .open(flags, Mode::empty())
                .map_err(|e| ToolError::from_io(&e, path, ToolError::OpenFailed))?;
            checked_regular(file, path).map(Some)
        }
    };
    lock_target(path, target, wait, open)?.ok_or_else(|| ToolError::OpenFailed(path.to_owned()))
}

/// file_write: locks the regular file `target` stands for, if there is
/// one. Nothing to lock (a new file, a device) or a file this process
/// cannot open is `None`: the write then goes ahead and reports what it
/// meets.
pub fn for_write(path: &str, target: &Target, wait: Duration) -> Result<Option<Locked>, ToolError> {
    lock_target(path, target, wait, || Ok(open_to_lock(target)))
}

/// Opens the target for nothing but the lock: for reading, else for
/// writing (a file we may write but not read). Never blocks (O_NONBLOCK: a
/// FIFO put in its place) and never truncates.
fn open_to_lock(target: &Target) -> Option<File> {
    let regular = |mode: u32| FileType::from_raw_mode(mode) == FileType::RegularFile;
    if !target.stat().is_ok_and(|st| regular(st.st_mode)) {
        return None;
    }
    let open = |access: OFlags| target.open(access | OFlags::NONBLOCK, Mode::empty());
    let file = open(OFlags::RDONLY).or_else(|_| open(OFlags::WRONLY)).ok()?;
    file.metadata().is_ok_and(|m| m.is_file()).then_some(file)
}

/// Opens with `open` and locks until the deadline. A change that held the
/// lock may have renamed a new file over the target while we waited; a lock
/// on the old file guards nothing, so then it is opened again.
fn lock_target(
    path: &str,
    target: &Target,
    wait: Duration,
    mut open: impl FnMut() -> Result<Option<File>, ToolError>,
) -> Result<Option<Locked>, ToolError> {
    let deadline = Instant::now() + wait;
    loop {
        let Some(file) = open()? else {
            return Ok(None);
        };
        match lock_until(file, deadline) {
            Ok(Locked::Held(lock)) if !target.same_file(&lock) => continue,
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
