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
//! the last word on what lies below.
//!
//! RESOLVE_BENEATH refuses every absolute link, even one naming a place
//! inside a root. Where openat2 says EXDEV, the path is walked once more
//! one component at a time (`walk`): each name opened with `O_PATH |
//! O_NOFOLLOW` from the directory descriptor before it, `..` taken back to
//! that descriptor (never above the root's), a relative link spliced into
//! the names still to walk, an absolute one matched against the roots and
//! walked from that root's descriptor. The kernel follows no link in this
//! walk, so it is as race-free as openat2; it only lets through what is
//! inside, and costs a system call or two per component, on this rare path
//! only.
//!
//! For writing, `open_parent` walks to the directory that will hold the
//! file and gives its name in it; the writer then creates, renames and
//! opens by that name relative to the directory's descriptor. A leaf that
//! is a symbolic link is followed, beneath the roots, to the directory and
//! name it finally stands for: a link (or a dangling one) that leads out is
//! refused, so nothing is ever created outside.
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
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{fstat, openat2, readlinkat, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::error::ConfineError;
use super::roots::Roots;

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
}

#[cfg(test)]
impl Parent {
    /// Opens the file itself, never following a link (one put there since
    /// `open_parent` looked is refused with ELOOP).
    pub fn open_leaf(&self, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        openat_beneath(self.dir.as_fd(), Path::new(&self.name), flags | OFlags::NOFOLLOW, mode)
    }

    /// The file's metadata, not following a link; ENOENT for a new file.
    pub fn stat_leaf(&self) -> io::Result<rustix::fs::Stat> {
        let nofollow = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        rustix::fs::statat(&self.dir, self.name.as_os_str(), nofollow).map_err(Into::into)
    }
}

impl Roots {
    /// The refusal for `path`, naming the roots.
    pub fn outside(&self, path: &str) -> ConfineError {
        ConfineError::Outside { path: path.to_owned(), roots: self.shown(), set_by: self.source() }
    }

    /// Opens `path` (as the model gave it) beneath the roots.
    pub fn open(&self, path: &str, flags: OFlags, mode: Mode) -> Result<OwnedFd, ConfineError> {
        self.resolve(path, |i, rest| self.open_in(i, rest, flags, mode))
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
        self.resolve(path, |i, rest| {
            let fd = self.open_in(i, rest, flags, Mode::empty())?;
            Ok(ConfinedDir { fd, root: i, rel: rest.to_path_buf() })
        })
    }

    /// Opens what a walk met at `rel` below root `root` (a link, typically):
    /// followed while it stays beneath the roots, refused when it leads out.
    pub fn open_below(
        &self,
        root: usize,
        rel: &Path,
        flags: OFlags,
    ) -> Result<OwnedFd, ConfineError> {
        let Some(r) = self.roots().get(root) else {
            return Err(ConfineError::Io(io::Error::from_raw_os_error(libc::EBADF)));
        };
        match self.open_in(root, rel, flags, Mode::empty()) {
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                Err(self.outside(&r.path().join(rel).display().to_string()))
            }
            result => result.map_err(ConfineError::Io),
        }
    }

    /// The directory that holds (or will hold) the file `path` names, and
    /// its name there, following a leaf link beneath the roots.
    pub fn open_parent(&self, path: &str) -> Result<Parent, ConfineError> {
        self.resolve(path, |i, rest| {
            let (_, dir, name) = self.walk(i, rest, true)?;
            if name == "." {
                // `.`, `..`, the root itself: a directory, not a file.
                return Err(io::Error::from_raw_os_error(libc::EISDIR));
            }
            // Readable if we may (to fsync it); a `-wx` drop box still
            // takes new files through its path descriptor.
            let read = OFlags::RDONLY | OFlags::DIRECTORY;
            let dir =
                openat_beneath(dir.as_fd(), Path::new("."), read, Mode::empty()).unwrap_or(dir);
            Ok(Parent { dir, name })
        })
    }

    /// Opens `rest` below root `i`: openat2 in one call, or, where it says
    /// EXDEV, the component walk (which lets absolute links inside through).
    fn open_in(&self, i: usize, rest: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        match openat_beneath(self.roots()[i].fd(), rest, flags, mode) {
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                let (_, dir, name) = self.walk(i, rest, !flags.contains(OFlags::NOFOLLOW))?;
                let mut last = if name == "." { flags } else { flags | OFlags::NOFOLLOW };
                // `file/` names a directory: ENOTDIR, as openat2 would say.
                if rest.as_os_str().as_bytes().ends_with(b"/") {
                    last |= OFlags::DIRECTORY;
                }
                openat_beneath(dir.as_fd(), Path::new(&name), last, mode)
            }
            result => result,
        }
    }

    /// Runs `open` on each root `path` may lie under (deepest first) and
    /// the path below it, until one does not answer EXDEV.
    fn resolve<T>(
        &self,
        path: &str,
        mut open: impl FnMut(usize, &Path) -> io::Result<T>,
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
            match open(i, &rest) {
                Err(e) if e.raw_os_error() == Some(libc::EXDEV) => continue,
                result => return result.map_err(ConfineError::Io),
            }
        }
        Err(self.outside(path))
    }

    /// Walks `rest` below root `i` one component at a time (see the module
    /// comment): the root it ends in, the directory holding the last
    /// component (an `O_PATH` descriptor) and that component's name, which
    /// is not a link (unless `!follow_last`) or does not exist; `.` when the
    /// path ends at a directory (`a/..`, empty). EXDEV when it leads out.
    fn walk(
        &self,
        i: usize,
        rest: &Path,
        follow_last: bool,
    ) -> io::Result<(usize, OwnedFd, OsString)> {
        let mut root = i;
        let mut dirs: Vec<OwnedFd> = vec![self.roots()[root].fd().try_clone_to_owned()?];
        // Names still to walk, the next one last.
        let mut todo: Vec<OsString> = Vec::new();
        push_front(&mut todo, rest);
        let mut links = 0;
        while let Some(name) = todo.pop() {
            if name == ".." {
                if dirs.len() == 1 {
                    return Err(io::Error::from_raw_os_error(libc::EXDEV));
                }
                dirs.pop();
                continue;
            }
            let last = todo.is_empty();
            let top = dirs.last().ok_or_else(|| io::Error::from_raw_os_error(libc::EXDEV))?;
            let path_flags = OFlags::PATH | OFlags::NOFOLLOW;
            let fd = match openat_beneath(top.as_fd(), Path::new(&name), path_flags, Mode::empty())
            {
                Err(e) if last && e.raw_os_error() == Some(libc::ENOENT) => {
                    return Ok((root, top.try_clone()?, name));
                }
                result => result?,
            };
            let kind = FileType::from_raw_mode(fstat(&fd)?.st_mode);
            if kind == FileType::Symlink && (follow_last || !last) {
                links += 1;
                if links > MAX_LINKS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                let target = PathBuf::from(OsString::from_vec(
                    readlinkat(&fd, "", Vec::new())?.into_bytes(),
                ));
                if target.is_absolute() {
                    // Walked again from the root it lies in, if any.
                    let Some((j, below)) = self.candidates(&target).into_iter().next() else {
                        return Err(io::Error::from_raw_os_error(libc::EXDEV));
                    };
                    root = j;
                    dirs = vec![self.roots()[root].fd().try_clone_to_owned()?];
                    push_front(&mut todo, &below);
                } else {
                    push_front(&mut todo, &target);
                }
                continue;
            }
            if last {
                return Ok((root, top.try_clone()?, name));
            }
            if kind != FileType::Directory {
                return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
            }
            dirs.push(fd);
        }
        let dir = dirs.pop().ok_or_else(|| io::Error::from_raw_os_error(libc::EXDEV))?;
        Ok((root, dir, OsString::from(".")))
    }
}

/// Puts the components of `path` in front of the names still to walk
/// (`todo` holds them next-last); `.` and `/` are dropped (an absolute
/// link target restarts its walk from `/`, which is the caller's to do).
pub(super) fn push_front(todo: &mut Vec<OsString>, path: &Path) {
    for component in path.components().rev() {
        match component {
            Component::Normal(name) => todo.push(name.to_os_string()),
            Component::ParentDir => todo.push(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
