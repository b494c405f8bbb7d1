//! Whether a directory lies where a confined command may write: at or
//! beneath an allowed root or the sandbox's private temporary directory
//! (`temp`), or is itself above a root. What lives there (the job state
//! directory: `jobs::state`) must not be trusted by the tools, since a
//! command could have made or changed it.
//!
//! Decided by identity, not by name: the directory's ancestors are found
//! by opening `..` from the open directory up to `/`, each known by device
//! and inode, and compared with the roots' and the temporary directory's
//! own. A link, a bind mount or another spelling of a root's path changes
//! nothing; the walk is the one the kernel makes for Landlock's rules.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::roots::{id_of, Roots};
use super::temp;

/// A directory's identity: device and inode.
type Id = super::namespace::Identity;

/// Deeper than any real path: a walk that has not reached `/` by then is
/// given up on.
const MAX_DEPTH: usize = 4096;

/// Where a directory lies, when a confined command may write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writable {
    /// At or beneath this allowed root.
    BeneathRoot(String),
    /// Above this allowed root, which lies within it.
    HoldsRoot(String),
    /// At or beneath the sandbox's private temporary directory.
    BeneathTemp(String),
}

impl Writable {
    /// `lies beneath allowed root /w`, after the directory's name.
    pub fn describe(&self) -> String {
        match self {
            Writable::BeneathRoot(root) => format!("lies beneath allowed root {root}"),
            Writable::HoldsRoot(root) => format!("holds allowed root {root}"),
            Writable::BeneathTemp(dir) => {
                format!("lies beneath the sandbox's temporary directory {dir}")
            }
        }
    }
}

/// Whether a confined command of these `roots` (or of any roots, through
/// the sandbox's temporary directory) may write `dir` or beneath it;
/// `Err` when where it lies cannot be told.
pub fn writable(dir: BorrowedFd<'_>, roots: Option<&Roots>) -> io::Result<Option<Writable>> {
    let ancestors = ancestry(dir)?;
    let shown = |p: &Path| p.display().to_string();
    for root in roots.map(Roots::roots).unwrap_or_default() {
        if ancestors.contains(&id_of(root.fd())?) {
            return Ok(Some(Writable::BeneathRoot(shown(root.path()))));
        }
    }
    if let Some(private) = temp::find_sandbox_temp() {
        if ancestors.contains(&id_of(private.fd.as_fd())?) {
            return Ok(Some(Writable::BeneathTemp(shown(&private.path))));
        }
    }
    let own = ancestors[0];
    for root in roots.map(Roots::roots).unwrap_or_default() {
        if ancestry(root.fd())?.contains(&own) {
            return Ok(Some(Writable::HoldsRoot(shown(root.path()))));
        }
    }
    Ok(None)
}

/// `dir` and each directory above it up to `/`, by identity (the MCP
/// server's ceiling for client roots asks the same question).
pub fn ancestry(dir: BorrowedFd<'_>) -> io::Result<Vec<Id>> {
    let mut ids = vec![id_of(dir)?];
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut here = rustix::fs::openat(dir, "..", flags, Mode::empty())?;
    for _ in 0..MAX_DEPTH {
        let up = id_of(here.as_fd())?;
        // `/..` is `/`.
        if ids.last() == Some(&up) {
            return Ok(ids);
        }
        ids.push(up);
        here = rustix::fs::openat(&here, "..", flags, Mode::empty())?;
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> std::os::fd::OwnedFd {
        rustix::fs::open(path, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn beneath_above_or_beside_a_root_by_identity() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir(base.join("beside")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), base.join("link")).unwrap();
        let roots = Roots::from_paths([&root]).unwrap();
        let shown = root.display().to_string();
        let at = |p: &Path| writable(open(p).as_fd(), Some(&roots)).unwrap();
        assert_eq!(at(&root), Some(Writable::BeneathRoot(shown.clone())));
        assert_eq!(at(&root.join("a/b")), Some(Writable::BeneathRoot(shown.clone())));
        // Through a link from outside: still beneath.
        assert_eq!(at(&base.join("link/b")), Some(Writable::BeneathRoot(shown.clone())));
        assert_eq!(at(&base), Some(Writable::HoldsRoot(shown.clone())));
        assert_eq!(at(&base.join("beside")), None);
        assert_eq!(writable(open(&root).as_fd(), None).unwrap(), None, "no roots: none");
        assert_eq!(
            Writable::BeneathRoot(shown.clone()).describe(),
            format!("lies beneath allowed root {shown}")
        );
    }
}
