//! The signals that would interrupt a write, and the process-wide settings
//! for them, made once when a tool run starts (`install`, called by the
//! command line's dispatch before the tool reads its arguments):
//!
//! - SIGTERM, SIGINT, SIGHUP (a host stopping the tool): the temporary file
//!   of a write in progress (`remove_on_signal`) is removed, then the signal
//!   is raised again with its default disposition, so that the tool still
//!   ends "killed by signal N". A signal the host ignores (`nohup`) stays
//!   ignored. Only SIGKILL (and power loss) can leave a temporary file.
//! - SIGXFSZ: a file size limit (`ulimit -f`) fails the write with EFBIG,
//!   which the tool reports, instead of killing it before it answers.
//!
//! Handlers, never SIG_IGN: an ignored signal stays ignored in the programs
//! the bash tool starts, a handled one is reset to its default at exec.

use std::ffi::{CString, OsStr};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};

/// The signals by which a host tells the tool to stop.
pub const STOP: [Signal; 3] = [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP];

/// The temporary files to remove if the tool is stopped, one a slot: a
/// name, a C string leaked while registered (null when the slot is free),
/// in the directory the slot's `TEMP_DIRS` entry holds open (a descriptor:
/// the name is never resolved from a path again, so a confined write stays
/// beneath its root even here). Several at once for apply_patch, which
/// prepares every file of a patch before putting any in place.
static TEMP_PATHS: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static TEMP_DIRS: [AtomicI32; SLOTS] = [const { AtomicI32::new(libc::AT_FDCWD) }; SLOTS];
/// Temporary files registered at once; one more is not removed by a stop
/// signal (docs/GUARANTEES.md says what a stop can leave).
const SLOTS: usize = 64;

/// Sets the dispositions described above, for the whole process.
pub fn install() {
    let stop = SigAction::new(
        SigHandler::Handler(remove_temp_and_die),
        SaFlags::SA_RESTART,
        stop_signals(),
    );
    for sig in heeded_stop_signals() {
        // SAFETY: the handler only makes async-signal-safe calls (unlinkat,
        // signal, raise) and reads atomics.
        let _ = unsafe { sigaction(sig, &stop) };
    }
    let fail_the_write =
        SigAction::new(SigHandler::Handler(do_nothing), SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: the handler does nothing.
    let _ = unsafe { sigaction(Signal::SIGXFSZ, &fail_the_write) };
}

/// While the returned value lives, a stop signal removes `name` from the
/// directory `dir` (which the caller keeps open as long) before the tool
/// dies.
pub fn remove_on_signal(dir: RawFd, name: &OsStr) -> Registration {
    let Ok(c_name) = CString::new(name.as_bytes()) else {
        // A name with a NUL byte names no file: nothing to remove.
        return Registration(None);
    };
    let new = c_name.into_raw();
    let slot = blocked(|| {
        // The handler cannot run in between: the stop signals are held.
        let slot = TEMP_PATHS.iter().position(|p| p.load(Ordering::SeqCst).is_null())?;
        TEMP_DIRS[slot].store(dir, Ordering::SeqCst);
        TEMP_PATHS[slot].store(new, Ordering::SeqCst);
        Some(slot)
    });
    if slot.is_none() {
        free(new);
    }
    Registration(slot)
}

/// Unregisters the temporary file when dropped.
#[must_use]
pub struct Registration(Option<usize>);

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            let old = blocked(|| TEMP_PATHS[slot].swap(std::ptr::null_mut(), Ordering::SeqCst));
            free(old);
        }
    }
}

/// Runs `f` with the stop signals held back: one that comes meanwhile is
/// delivered when `f` is done. A rename and the unregistering of the file
/// it renamed go together so: a signal between them would remove the
/// target itself.
pub fn blocked<T>(f: impl FnOnce() -> T) -> T {
    let old = stop_signals().thread_swap_mask(SigmaskHow::SIG_BLOCK);
    let result = f();
    if let Ok(old) = old {
        let _ = old.thread_set_mask();
    }
    result
}

fn stop_signals() -> SigSet {
    let mut set = SigSet::empty();
    for sig in STOP {
        set.add(sig);
    }
    set
}

fn free(ptr: *mut libc::c_char) {
    if !ptr.is_null() {
        // SAFETY: every non-null pointer stored in TEMP_PATHS came from
        // `CString::into_raw`, and the swap that took it out gave it to us
        // alone.
        drop(unsafe { CString::from_raw(ptr) });
    }
}

extern "C" fn remove_temp_and_die(sig: libc::c_int) {
    for (path, dir) in TEMP_PATHS.iter().zip(&TEMP_DIRS) {
        let path = path.load(Ordering::SeqCst);
        let dir = dir.load(Ordering::SeqCst);
        // SAFETY: an async-signal-safe call (unlinkat is one, as unlink);
        // `path`, when not null, is a C string that stays allocated while
        // registered, and it is unregistered (and freed) only with these
        // signals blocked, so never under this handler.
        unsafe {
            if !path.is_null() {
                libc::unlinkat(dir, path, 0);
            }
        }
    }
    // SAFETY: async-signal-safe calls. The default disposition, and the
    // signal again: it is blocked while its handler runs, so it ends the
    // process as soon as we return.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

extern "C" fn do_nothing(_sig: libc::c_int) {}

/// The stop signals the host has not chosen to ignore: one it ignores
/// (`nohup` ignores SIGHUP) is no request to stop, and stays ignored. The
/// bash tool watches these same ones while its command runs.
pub fn heeded_stop_signals() -> impl Iterator<Item = Signal> {
    STOP.into_iter().filter(|sig| !is_ignored(*sig))
}

fn is_ignored(sig: Signal) -> bool {
    // SAFETY: a query; a null new action changes nothing.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig as libc::c_int, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}
