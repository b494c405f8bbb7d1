//! The file a write or an edit changes, held as the directory's descriptor
//! and the file's name in it: every later step (the lock, the metadata,
//! the temporary file, the rename, the in-place write, the directory's
//! flush) works relative to that descriptor, never by path.
//!
//! - Unconfined: the path is followed through its symbolic links (chains
//!   and relative links included, as `echo > link` does) to the file they
//!   end at, and that file's directory is opened.
//! - Confined (docs/CONFINEMENT.md): the directory is opened beneath an allowed
//!   root by `Roots::open_parent`, which follows links only while they stay
//!   beneath the roots; the name is then never followed (O_NOFOLLOW,
//!   AT_SYMLINK_NOFOLLOW), so a link planted meanwhile is refused, not
//!   followed out.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{accessat, fstat, open, openat, statat, Access, AtFlags, Mode, OFlags, Stat};

use crate::confine::{ConfineError, Roots};
use crate::error::{Kind, ToolError, Why};

/// Why a file cannot be made at `path`, whose directory was not found: the
/// path's own parent, named, when that is not a directory; else a directory
/// the path leads to through a symbolic link. (A look at the parent, on the
/// way to an error only.)
pub fn missing_directory(path: &str) -> Why {
    let parent = Path::new(path).parent().and_then(Path::to_str).filter(|p| !p.is_empty());
    match parent {
        Some(dir) if !Path::new(dir).is_dir() => Why::NoDirectory(Some(dir.to_owned())),
        _ => Why::NoDirectory(None),
    }
}

/// Symbolic links followed before giving up, as the kernel does (ELOOP).
const MAX_SYMLINKS: usize = 40;

#[derive(Debug)]
pub struct Target {
    /// Readable where we may (it can then be flushed), else `O_PATH`.
    dir: OwnedFd,
    /// One component, never `.` or `..`.
    name: OsString,
    /// Unconfined: the file's resolved path, which its extended attributes
    /// are read by. `None` when confined.
    path: Option<PathBuf>,
}

impl Target {
    /// The target of a write to `path` (as the model gave it). Errors are
    /// refusals (outside the roots) or the I/O error met on the way.
    pub fn resolve(path: &str, roots: Option<&Roots>) -> Result<Target, ConfineError> {
        match roots {
            Some(roots) => {
                let parent = roots.open_parent(path)?;
                Ok(Target { dir: parent.dir, name: parent.name, path: None })
            }
            None => {
                let target = resolve_symlinks(Path::new(path))?;
                // `.`, `..`, `/`, `a/..`: a directory, never a file to write.
                let Some(name) = target.file_name() else {
                    return Err(io::Error::from_raw_os_error(libc::EISDIR).into());
                };
                let dir = open_dir(parent(&target))?;
                let name = name.to_os_string();
                Ok(Target { dir, name, path: Some(target) })
            }
        }
    }

    /// `resolve` with the errors a write answers: a missing directory is
    /// `OPEN_FAILED` (docs/SPEC.md: the file cannot be created), as is a path
    /// that names a directory.
    pub fn for_write(path: &str, roots: Option<&Roots>) -> Result<Target, ToolError> {
        // `fopen("dir/", "w")` fails whether or not `dir` exists: a path
        // with a trailing slash names a directory, never a file to write.
        let open_failed = |why| ToolError::OpenFailed(path.to_owned()).because(why);
        if path.ends_with('/') {
            return Err(open_failed(Why::TrailingSlash));
        }
        Target::resolve(path, roots).map_err(|e| match e {
            ConfineError::Io(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                open_failed(missing_directory(path))
            }
            ConfineError::Io(e) if e.raw_os_error() == Some(libc::EISDIR) => {
                open_failed(Why::Kind(Kind::Directory))
            }
            other => other.into_tool_error(path, ToolError::OpenFailed),
        })
    }

    pub fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    pub fn name(&self) -> &std::ffi::OsStr {
        &self.name
    }

    /// Confined targets never follow the name (see the module comment).
    fn nofollow(&self) -> bool {
        self.path.is_none()
    }

    /// The file's metadata; ENOENT for a new file.
    pub fn stat(&self) -> io::Result<Stat> {
        let flags = if self.nofollow() { AtFlags::SYMLINK_NOFOLLOW } else { AtFlags::empty() };
        Ok(statat(&self.dir, &self.name, flags)?)
    }

    /// Opens the file itself with `flags` (O_CLOEXEC added).
    pub fn open(&self, flags: OFlags, mode: Mode) -> io::Result<File> {
        let nofollow = if self.nofollow() { OFlags::NOFOLLOW } else { OFlags::empty() };
        Ok(File::from(openat(&self.dir, &self.name, flags | nofollow | OFlags::CLOEXEC, mode)?))
    }

    /// Whether we may write the file (by the effective ids, as an open).
    pub fn check_writable(&self) -> io::Result<()> {
        let mut flags = AtFlags::EACCESS;
        if self.nofollow() {
            flags |= AtFlags::SYMLINK_NOFOLLOW;
        }
        Ok(accessat(&self.dir, &self.name, Access::WRITE_OK, flags)?)
    }

    /// Whether the name still stands for the open `file`.
    pub fn same_file(&self, file: &File) -> bool {
        match (self.stat(), fstat(file)) {
            (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
            // Gone or unreadable now: the next open reports it.
            _ => false,
        }
    }

    /// Runs `read` with a path by which the file's extended attributes can
    /// be read: unconfined, its resolved path; confined, the `/proc` name
    /// of a descriptor opened on it (`O_PATH`, never following), checked to
    /// be the file `expected` describes.
    pub fn with_attribute_path<T>(
        &self,
        expected: &Stat,
        read: impl FnOnce(&Path) -> io::Result<T>,
    ) -> io::Result<T> {
        if let Some(path) = &self.path {
            return read(path);
        }
        let fd = self.open(OFlags::PATH, Mode::empty())?;
        let now = fstat(&fd)?;
        if now.st_dev != expected.st_dev || now.st_ino != expected.st_ino {
            // Replaced since we looked: the caller writes in place instead.
            return Err(io::Error::from_raw_os_error(libc::ESTALE));
        }
        read(Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())))
    }
}

/// Opens the directory `dir` readable (so that it can be flushed), or, a
/// directory we may search but not read, as `O_PATH`.
fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::DIRECTORY | OFlags::CLOEXEC;
    match open(dir, flags | OFlags::RDONLY, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(rustix::io::Errno::ACCESS) => Ok(open(dir, flags | OFlags::PATH, Mode::empty())?),
        Err(e) => Err(e.into()),
    }
}

/// The directory holding `target`.
fn parent(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Follows `path` through symbolic links (chains and relative links
/// included) to the path of the file they end at, which may not exist yet
/// (a dangling link: writing creates its target, as `echo > link` does).
fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = fs::read_link(&current)?;
                current = if next.is_absolute() {
                    next
                } else {
                    // Relative to the directory holding the link.
                    current.parent().unwrap_or(Path::new("")).join(next)
                };
            }
            // Not a link, or nothing there (yet): later steps report errors
            // with the right code.
            _ => return Ok(current),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_symlink_chains_resolve_against_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("sub")).unwrap();
        fs::write(d.join("real.txt"), "x").unwrap();
        std::os::unix::fs::symlink("../real.txt", d.join("sub/one")).unwrap();
        std::os::unix::fs::symlink("sub/one", d.join("two")).unwrap();
        assert_eq!(resolve_symlinks(&d.join("two")).unwrap(), d.join("sub/../real.txt"));
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        assert_eq!(
            resolve_symlinks(&d.join("loop")).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
    }
}
