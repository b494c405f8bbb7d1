//! Opening what the model names, beneath a root and never outside it.
//!
//! Every open starts from a root's descriptor and lets the kernel resolve
//! the rest with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: `..`
//! above the root, an absolute symbolic link, a relative one that climbs
//! out, `/proc` magic links — all fail inside that one system call (EXDEV,
//! ELOOP), so nothing can change between a check and the open. There is no
//! check: the open is the check.
//!
//! Which root a path belongs to is decided lexically, component by
//! component (`/w/proj_evil` is not under `/w/proj`); the kernel then has
//! the last word on what lies below. A link inside a root that leads to
//! another place inside it works; an absolute link is refused even when it
//! names a place inside (RESOLVE_BENEATH treats every absolute link as
//! leaving), so links inside a project should be relative, as git makes
//! them.
//!
//! For writing, `open_parent` opens the directory that will hold the file
//! and gives its name in it; the writer then creates, renames and opens by
//! that name relative to the directory's descriptor. A leaf that is a
//! symbolic link is followed here, beneath the root, link by link, to the
//! directory and name it finally stands for: a link (or a dangling one)
//! that leads out is refused, so nothing is ever created outside.
//!
//! For walking (glob, grep), `open_dir` opens the starting directory; each
//! entry that is not a link is opened from its directory with `open_entry`
//! (a single name, never followed); an entry that is a link is opened by
//! its whole path from the root with `open_below`, so that it works when it
//! stays inside and is refused (skip it) when it leads out.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{openat2, readlinkat, statat, AtFlags, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

use super::error::ConfineError;
use super::roots::{Root, Roots};

/// How every path below a root is resolved.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// openat2 answers EAGAIN when a rename or mount elsewhere raced with a
/// `..` it resolved; trying again is what the kernel asks. Bounded, so a
/// process renaming in a loop cannot keep a tool spinning.
const EAGAIN_RETRIES: usize = 128;

/// Links followed at a leaf being written, as the kernel follows (ELOOP).
const MAX_LINKS: usize = 40;

/// `openat2(dir, rel, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`,
/// always close-on-exec, retried on EAGAIN. An empty `rel` opens `dir`
/// itself. EXDEV means `rel` leads out of `dir`.
pub fn openat_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
    let flags = flags | OFlags::CLOEXEC;
    let mut tries = 0;
    loop {
        match openat2(dir, rel, flags, mode, RESOLVE) {
            Err(Errno::AGAIN) if tries < EAGAIN_RETRIES => tries += 1,
            result => return result.map_err(io::Error::from),
        }
    }
}

/// Opens entry `name` of a directory being walked, as it is: a symbolic
/// link is not followed (ELOOP, or the link itself with `O_PATH`), `..` is
/// refused.
pub fn open_entry(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlags) -> io::Result<OwnedFd> {
    openat_beneath(dir, Path::new(name), flags | OFlags::NOFOLLOW, Mode::empty())
}

/// A directory opened beneath a root, where a walk starts.
#[derive(Debug)]
pub struct ConfinedDir {
    pub fd: OwnedFd,
    /// Index of the root in `Roots::roots()`.
    pub root: usize,
    /// The directory's path below that root (empty for the root itself).
    pub rel: PathBuf,
}

/// The directory a file is to be written in, and the file's name there.
#[derive(Debug)]
pub struct Parent {
    /// `O_RDONLY | O_DIRECTORY` where the directory is readable (it can then
    /// be fsynced), else `O_PATH | O_DIRECTORY`; either serves as the
    /// `dirfd` of openat, renameat, fchownat, statat.
    pub dir: OwnedFd,
    /// One component, never `.` or `..`; what the model named, or, when
    /// that was a link staying inside, the name the link finally leads to.
    pub name: OsString,
    pub root: usize,
    /// The directory's path below the root.
    pub rel_dir: PathBuf,
}

impl Parent {
    /// Opens the file itself, never following a link (one put there since
    /// `open_parent` looked is refused with ELOOP).
    pub fn open_leaf(&self, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        openat_beneath(self.dir.as_fd(), Path::new(&self.name), flags | OFlags::NOFOLLOW, mode)
    }

    /// The file's metadata, not following a link; ENOENT for a new file.
    pub fn stat_leaf(&self) -> io::Result<Stat> {
        statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(Into::into)
    }
}

impl Roots {
    /// The refusal for `path`, naming the roots.
    pub fn outside(&self, path: &str) -> ConfineError {
        ConfineError::Outside { path: path.to_owned(), roots: self.shown() }
    }

    /// Opens `path` (as the model gave it) beneath the roots.
    pub fn open(&self, path: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, ConfineError> {
        self.resolve(path, |_, root, rest| openat_beneath(root.fd(), rest, flags, mode))
    }

    /// Opens `path` for reading, without blocking on a FIFO (O_NONBLOCK:
    /// clear it once the kind is checked) and without taking a terminal.
    pub fn open_read(&self, path: &str) -> Result<File, ConfineError> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        self.open(path, flags, Mode::empty()).map(File::from)
    }

    /// Opens the directory `path` to walk it.
    pub fn open_dir(&self, path: &str) -> Result<ConfinedDir, ConfineError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        self.resolve(path, |i, root, rest| {
            let fd = openat_beneath(root.fd(), rest, flags, Mode::empty())?;
            Ok(ConfinedDir { fd, root: i, rel: rest.to_path_buf() })
        })
    }

    /// Opens what a walk met at `rel` below root `root` (a link, typically):
    /// followed while it stays beneath that root, refused when it leads out.
    pub fn open_below(
        &self,
        root: usize,
        rel: &Path,
        flags: OFlags,
    ) -> Result<OwnedFd, ConfineError> {
        let Some(r) = self.roots().get(root) else {
            return Err(ConfineError::Io(io::Error::from_raw_os_error(libc::EBADF)));
        };
        match openat_beneath(r.fd(), rel, flags, Mode::empty()) {
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                Err(self.outside(&r.path().join(rel).display().to_string()))
            }
            result => result.map_err(ConfineError::Io),
        }
    }

    /// The directory that holds (or will hold) the file `path` names, and
    /// its name there, following a leaf link beneath the root.
    pub fn open_parent(&self, path: &str) -> Result<Parent, ConfineError> {
        self.resolve(path, parent_beneath)
    }

    /// Runs `open` on each root `path` may lie under (deepest first) and
    /// the path below it, until one does not answer EXDEV.
    fn resolve<T>(
        &self,
        path: &str,
        mut open: impl FnMut(usize, &Root, &Path) -> io::Result<T>,
    ) -> Result<T, ConfineError> {
        if path.is_empty() {
            return Err(ConfineError::Io(io::Error::from_raw_os_error(libc::ENOENT)));
        }
        for (i, rest) in self.candidates(Path::new(path)) {
            // `dir/` must stay a directory's name: Path drops the slash.
            let rest = if path.ends_with('/') && !rest.as_os_str().is_empty() {
                let mut bytes = rest.into_os_string().into_vec();
                bytes.push(b'/');
                PathBuf::from(OsString::from_vec(bytes))
            } else {
                rest
            };
            match open(i, &self.roots()[i], &rest) {
                Err(e) if e.raw_os_error() == Some(libc::EXDEV) => continue,
                result => return result.map_err(ConfineError::Io),
            }
        }
        Err(self.outside(path))
    }
}

/// `open_parent` below one root: opens the directory of `rest`, and while
/// the name there is a symbolic link, goes where it leads (from the root,
/// so that its `..` cannot climb out). EXDEV when anything leads out.
fn parent_beneath(i: usize, root: &Root, rest: &Path) -> io::Result<Parent> {
    let mut rel = rest.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let name = match rel.components().next_back() {
            Some(Component::Normal(name)) => name.to_os_string(),
            // `.`, `..`, the root itself: a directory, not a file to write.
            _ => return Err(io::Error::from_raw_os_error(libc::EISDIR)),
        };
        let rel_dir = rel.parent().unwrap_or(Path::new("")).to_path_buf();
        let dir = open_dir_to_write(root.fd(), &rel_dir)?;
        match readlinkat(&dir, name.as_os_str(), Vec::new()) {
            Ok(target) => {
                let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                if target.is_absolute() {
                    // As RESOLVE_BENEATH treats an absolute link: leaving.
                    return Err(io::Error::from_raw_os_error(libc::EXDEV));
                }
                rel = rel_dir.join(target);
            }
            // Not a link (EINVAL) or nothing there yet (ENOENT): the name.
            Err(Errno::INVAL | Errno::NOENT) => {
                return Ok(Parent { dir, name, root: i, rel_dir });
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// A directory to create files in: readable if we may (to fsync it), else
/// a path descriptor (a `-wx` drop box still takes new files).
fn open_dir_to_write(root: BorrowedFd<'_>, rel: &Path) -> io::Result<OwnedFd> {
    let read = OFlags::RDONLY | OFlags::DIRECTORY;
    match openat_beneath(root, rel, read, Mode::empty()) {
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            openat_beneath(root, rel, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())
        }
        result => result,
    }
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
