//! A directory of the effective user's own that no one else may enter,
//! under a fixed name in a shared place (`/tmp`) that another user cannot
//! squat: the sandbox's private temporary directory (`confine::temp`) and
//! the default job state directory (`jobs::state`).
//!
//! The fixed name (`ikigai-tools-UID`) is used when it is a real directory
//! (not a link) owned by the user, mode 0700 or stricter; it is made so
//! when missing. Someone else's directory, link or file at that name is
//! never used, never repaired: another user could otherwise make every
//! call fail by making it first. Then the directory is `NAME.XXXXXX` in the
//! same place: the first such entry (in byte order) that is the user's own
//! and private, or one made with a random suffix. Ownership is what tells
//! ours apart, and no other user can make an entry that the user owns.
//!
//! The user's own entry at the fixed name that is wrong (open to others, a
//! link, a file) is refused with what is wrong: only the user (or root)
//! made it so, and falling back would hide a mistake.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

use crate::random_name::with_random;

/// Random names tried when each one tried is taken already.
const TRIES: usize = 100;

/// The longest suffix of a `NAME.XXXXXX` entry taken as ours.
const MAX_SUFFIX: usize = 16;

/// A private directory, open.
#[derive(Debug)]
pub struct PrivateDir {
    pub path: PathBuf,
    pub fd: OwnedFd,
}

/// Why a directory cannot be used.
#[derive(Debug)]
pub enum Refused {
    CannotMake(io::Error),
    CannotOpen(io::Error),
    /// A link, a file, anything but a directory.
    NotADirectory,
    /// Its mode bits.
    OpenToOthers(u32),
    /// The owner's uid (only where no other name may be taken).
    NotOwned(u32),
}

impl Refused {
    /// What is wrong, after the directory's name: `is open to other users
    /// (mode 755; 700 is needed)`.
    pub fn describe(&self) -> String {
        match self {
            Refused::CannotMake(e) => format!("cannot be made ({e})"),
            Refused::CannotOpen(e) => format!("cannot be opened ({e})"),
            Refused::NotADirectory => "is not a directory (a link or a file)".to_owned(),
            Refused::OpenToOthers(mode) => {
                format!("is open to other users (mode {mode:o}; 700 is needed)")
            }
            Refused::NotOwned(uid) => {
                format!("belongs to uid {uid}, not to uid {}", rustix::process::geteuid().as_raw())
            }
        }
    }
}

/// The user's private directory `name` in `base` (see the module doc),
/// made if there is none.
pub fn open_own(base: &Path, name: &str) -> Result<PrivateDir, Refused> {
    let path = base.join(name);
    match open_at(CWD, &path, true) {
        Ok(fd) => Ok(PrivateDir { path, fd }),
        Err(Refused::NotOwned(_)) => elsewhere(base, name, true),
        Err(e) => Err(e),
    }
}

/// `open_own` without making anything: `None` when there is none (or the
/// one at the fixed name cannot be used).
pub fn find_own(base: &Path, name: &str) -> Option<PrivateDir> {
    let path = base.join(name);
    match open_at(CWD, &path, false) {
        Ok(fd) => Some(PrivateDir { path, fd }),
        Err(Refused::NotOwned(_)) => elsewhere(base, name, false).ok(),
        Err(_) => None,
    }
}

/// The directory `name` (relative to `at`), made mode 0700 when missing
/// and `make`, refused unless it is the user's own and private: where the
/// name was chosen by the user, no other one is taken.
pub fn open_exact_at(at: BorrowedFd<'_>, name: &Path) -> Result<OwnedFd, Refused> {
    open_at(at, name, true)
}

fn open_at(at: BorrowedFd<'_>, name: &Path, make: bool) -> Result<OwnedFd, Refused> {
    if make {
        match rustix::fs::mkdirat(at, name, Mode::RWXU) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(Refused::CannotMake(e.into())),
        }
    }
    let euid = rustix::process::geteuid().as_raw();
    // O_NOFOLLOW: a link planted at the name is refused (ELOOP or
    // ENOTDIR), never followed.
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(at, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            // Someone else's link, file or closed directory at the name.
            if let Ok(st) = rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
                if st.st_uid != euid {
                    return Err(Refused::NotOwned(st.st_uid));
                }
            }
            return Err(match e {
                Errno::LOOP | Errno::NOTDIR => Refused::NotADirectory,
                e => Refused::CannotOpen(e.into()),
            });
        }
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| Refused::CannotOpen(e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return Err(Refused::NotADirectory);
    }
    if stat.st_uid != euid {
        return Err(Refused::NotOwned(stat.st_uid));
    }
    if stat.st_mode & 0o077 != 0 {
        return Err(Refused::OpenToOthers(stat.st_mode & 0o7777));
    }
    Ok(fd)
}

/// The fixed name is someone else's: the first `NAME.XXXXXX` of ours in
/// `base`, or (when `make`) a new one.
fn elsewhere(base: &Path, name: &str, make: bool) -> Result<PrivateDir, Refused> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let base_fd =
        rustix::fs::open(base, flags, Mode::empty()).map_err(|e| Refused::CannotOpen(e.into()))?;
    let prefix = format!("{name}.");
    if let Some(found) = first_own(base_fd.as_fd(), base, &prefix) {
        return Ok(found);
    }
    if !make {
        return Err(Refused::CannotOpen(Errno::NOENT.into()));
    }
    let mut random = RandomState::new().build_hasher();
    for _ in 0..TRIES {
        let made = with_random(prefix.as_bytes(), &mut random);
        match rustix::fs::mkdirat(&base_fd, made.as_os_str(), Mode::RWXU) {
            Ok(()) => {}
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(Refused::CannotMake(e.into())),
        }
        // Two calls that made one each at once: the first in order is
        // everyone's, and the other is removed (still empty).
        let first = first_own(base_fd.as_fd(), base, &prefix);
        if first.as_ref().is_none_or(|f| f.path.file_name() != Some(made.as_os_str())) {
            let _ = rustix::fs::unlinkat(&base_fd, made.as_os_str(), AtFlags::REMOVEDIR);
        }
        return first.ok_or(Refused::CannotOpen(Errno::NOENT.into()));
    }
    Err(Refused::CannotMake(Errno::EXIST.into()))
}

/// The first entry of `base` named `PREFIX` and a suffix of letters and
/// digits that is the user's own private directory.
fn first_own(base_fd: BorrowedFd<'_>, base: &Path, prefix: &str) -> Option<PrivateDir> {
    let dir = rustix::fs::Dir::read_from(base_fd).ok()?;
    let mut names: Vec<Vec<u8>> = dir
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_bytes().to_vec())
        .filter(|name| {
            name.strip_prefix(prefix.as_bytes()).is_some_and(|suffix| {
                (1..=MAX_SUFFIX).contains(&suffix.len())
                    && suffix.iter().all(u8::is_ascii_alphanumeric)
            })
        })
        .collect();
    names.sort();
    names.into_iter().find_map(|name| {
        let name = Path::new(std::ffi::OsStr::from_bytes(&name)).to_path_buf();
        let fd = open_at(base_fd, &name, false).ok()?;
        Some(PrivateDir { path: base.join(name), fd })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_fixed_name_is_made_mode_700_and_found_again() {
        let t = tempfile::tempdir().unwrap();
        let made = open_own(t.path(), "x").unwrap();
        assert_eq!(made.path, t.path().join("x"));
        let mode = std::fs::metadata(&made.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(find_own(t.path(), "x").unwrap().path, made.path);
        assert!(find_own(t.path(), "y").is_none(), "nothing made by a look");
        assert!(!t.path().join("y").exists());
    }

    #[test]
    fn the_users_own_wrong_entry_is_refused_not_passed_over() {
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = open_own(t.path(), "open").unwrap_err().describe();
        assert_eq!(e, "is open to other users (mode 755; 700 is needed)");
        std::os::unix::fs::symlink(t.path(), t.path().join("link")).unwrap();
        let e = open_own(t.path(), "link").unwrap_err().describe();
        assert_eq!(e, "is not a directory (a link or a file)");
        std::fs::write(t.path().join("file"), "").unwrap();
        assert!(matches!(open_own(t.path(), "file"), Err(Refused::NotADirectory)));
        assert!(find_own(t.path(), "open").is_none());
    }

    /// As root only: an entry another user owns at the fixed name.
    #[test]
    fn a_name_another_user_holds_is_passed_over_for_one_of_ours() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root to make a directory another user owns");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let squat = t.path().join("x");
        std::fs::create_dir(&squat).unwrap();
        std::os::unix::fs::chown(&squat, Some(65534), Some(65534)).unwrap();
        assert!(find_own(t.path(), "x").is_none());
        let made = open_own(t.path(), "x").unwrap();
        let name = made.path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("x.") && name.len() == 8, "{name}");
        assert_eq!(std::fs::metadata(&made.path).unwrap().permissions().mode() & 0o777, 0o700);
        // Found again, by this call and the next; a later one of someone
        // else's, first in order, is passed over.
        assert_eq!(open_own(t.path(), "x").unwrap().path, made.path);
        let theirs = t.path().join("x.0");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        assert_eq!(find_own(t.path(), "x").unwrap().path, made.path);
        // A link of someone else's at the name: passed over too.
        std::fs::remove_dir(&squat).unwrap();
        std::os::unix::fs::symlink(t.path(), &squat).unwrap();
        std::os::unix::fs::lchown(&squat, Some(65534), Some(65534)).unwrap();
        assert_eq!(open_own(t.path(), "x").unwrap().path, made.path);
    }
}
