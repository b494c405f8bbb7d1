//! The temporary file a crash-safe write fills before renaming it over the
//! target: `.NAME.ikigai-tmp-XXXXXX` in the target's own directory, so that
//! one left by a killed process is recognisable for what it is. It is
//! removed when dropped unless renamed into place, and when the tool is
//! stopped by a signal (`fs::signals`).
//!
//! Everything is done relative to the directory's descriptor (openat,
//! renameat, unlinkat), never by path: with confinement on, that
//! descriptor was opened beneath an allowed root, and a name in it cannot
//! lead anywhere else.

use std::collections::hash_map::RandomState;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::hash::BuildHasher;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{
    linkat, openat, renameat, renameat_with, unlinkat, AtFlags, Mode, OFlags, RenameFlags,
};
use rustix::io::Errno;

use crate::fs::signals::{self, Registration};
use crate::random_name::{with_random, RANDOM_LEN};

/// Marks our temporary files.
const TEMP_MARK: &str = ".ikigai-tmp-";
/// The longest file name most file systems take (NAME_MAX).
const NAME_MAX: usize = 255;
/// Names tried before giving up (each taken already: EEXIST).
const TRIES: usize = 100;

pub struct TempFile<'d> {
    dir: BorrowedFd<'d>,
    name: OsString,
    file: File,
    /// Given up (inside the rename's blocked section) once renamed.
    cleanup: Option<Registration>,
}

impl<'d> TempFile<'d> {
    /// Creates the temporary file for `name` in the directory `dir`, with
    /// `mode` (less the umask). O_EXCL and O_NOFOLLOW: a name taken, or a
    /// link planted under it, is never opened; another name is tried.
    pub fn create(dir: BorrowedFd<'d>, name: &OsStr, mode: u32) -> io::Result<TempFile<'d>> {
        let prefix = prefix(name);
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let mut random = RandomState::new().build_hasher();
        for _ in 0..TRIES {
            let temp = with_random(&prefix, &mut random);
            // Created and registered with the stop signals held back: one
            // that came in between would leave the file behind.
            let made = signals::blocked(|| {
                let fd = openat(dir, &temp, flags | OFlags::CLOEXEC, Mode::from_raw_mode(mode))?;
                let cleanup = signals::remove_on_signal(dir.as_raw_fd(), &temp);
                Ok::<_, Errno>((fd, cleanup))
            });
            match made {
                Ok((fd, cleanup)) => {
                    return Ok(TempFile {
                        dir,
                        name: temp,
                        file: File::from(fd),
                        cleanup: Some(cleanup),
                    })
                }
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::from_raw_os_error(libc::EEXIST))
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    /// The temporary file's name in its directory.
    #[cfg(test)]
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// Renames the file over `target` in the same directory. On failure it
    /// is removed.
    pub fn rename_over(mut self, target: &OsStr) -> io::Result<()> {
        // The rename and the unregistering go together: a stop signal in
        // between would remove the target itself.
        signals::blocked(|| {
            renameat(self.dir, &self.name, self.dir, target)?;
            self.cleanup = None;
            Ok(())
        })
    }
}

impl TempFile<'_> {
    /// Renames the file to `target` in the same directory only if nothing
    /// has that name (`RENAME_NOREPLACE`; where the file system cannot,
    /// a hard link, which never replaces either): EEXIST if something
    /// does. On failure it is removed.
    pub fn rename_new(mut self, target: &OsStr) -> io::Result<()> {
        signals::blocked(|| {
            let flags = RenameFlags::NOREPLACE;
            match renameat_with(self.dir, &self.name, self.dir, target, flags) {
                Err(Errno::INVAL | Errno::NOSYS) => {
                    linkat(self.dir, &self.name, self.dir, target, AtFlags::empty())?;
                    // Linked: the target is in place; the temporary name
                    // goes as a failed write's would.
                    let _ = unlinkat(self.dir, &self.name, AtFlags::empty());
                }
                result => result?,
            }
            self.cleanup = None;
            Ok(())
        })
    }
}

impl TempFile<'_> {
    /// Exchanges the file with `target` in the same directory
    /// (`RENAME_EXCHANGE`, one atomic step): `target` then holds the new
    /// content and the temporary name the old file, which stays this
    /// value's to remove when dropped, or to exchange back by calling this
    /// again (apply_patch's undo). EINVAL where the file system cannot.
    pub fn exchange(&self, target: &OsStr) -> io::Result<()> {
        renameat_with(self.dir, &self.name, self.dir, target, RenameFlags::EXCHANGE)?;
        Ok(())
    }
}

/// A file moved aside to a temporary name in its own directory (a name as
/// `TempFile` makes them), to be put back or removed: apply_patch's Delete
/// and the old name of a Move, undone by `put_back`.
pub struct Aside<'d> {
    dir: BorrowedFd<'d>,
    name: OsString,
    original: OsString,
}

impl<'d> Aside<'d> {
    /// Renames `name` in `dir` to a new temporary name (never replacing
    /// anything there).
    pub fn move_aside(dir: BorrowedFd<'d>, name: &OsStr) -> io::Result<Aside<'d>> {
        let prefix = prefix(name);
        let mut random = RandomState::new().build_hasher();
        for _ in 0..TRIES {
            let temp = with_random(&prefix, &mut random);
            match renameat_with(dir, name, dir, &temp, RenameFlags::NOREPLACE) {
                Ok(()) => return Ok(Aside { dir, name: temp, original: name.to_os_string() }),
                Err(Errno::EXIST) => continue,
                // No RENAME_NOREPLACE here: the random name is free.
                Err(Errno::INVAL | Errno::NOSYS) => {
                    renameat(dir, name, dir, &temp)?;
                    return Ok(Aside { dir, name: temp, original: name.to_os_string() });
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::from_raw_os_error(libc::EEXIST))
    }

    /// Renames the file back to the name it had.
    pub fn put_back(self) -> io::Result<()> {
        renameat(self.dir, &self.name, self.dir, &self.original)?;
        Ok(())
    }

    /// Removes the file (what a failure leaves is a temporary name, which
    /// docs/GUARANTEES.md describes).
    pub fn remove(self) {
        let _ = unlinkat(self.dir, &self.name, AtFlags::empty());
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        // Still registered: not renamed, so ours to remove (then the
        // registration goes, in that order).
        if self.cleanup.is_some() {
            let _ = unlinkat(self.dir, &self.name, AtFlags::empty());
        }
    }
}

/// `.NAME.ikigai-tmp-`, with NAME shortened so that the whole name, random
/// characters included, stays within NAME_MAX.
fn prefix(name: &OsStr) -> Vec<u8> {
    let room = NAME_MAX - 1 - TEMP_MARK.len() - RANDOM_LEN;
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(NAME_MAX);
    out.push(b'.');
    out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    out.extend_from_slice(TEMP_MARK.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn open_dir(path: &std::path::Path) -> std::os::fd::OwnedFd {
        rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn temp_names_are_recognisable_and_fit_name_max() {
        let dir = tempfile::tempdir().unwrap();
        let fd = open_dir(dir.path());
        let temp = TempFile::create(fd.as_fd(), OsStr::new("notes.txt"), 0o600).unwrap();
        let name = temp.name().to_str().unwrap().to_owned();
        let random = name.strip_prefix(".notes.txt.ikigai-tmp-").unwrap();
        assert_eq!(random.len(), RANDOM_LEN, "{name}");
        assert!(random.bytes().all(|b| b.is_ascii_alphanumeric()), "{name}");
        assert!(dir.path().join(&name).exists());
        let long = "x".repeat(255);
        let temp = TempFile::create(fd.as_fd(), OsStr::new(&long), 0o600).unwrap();
        assert_eq!(temp.name().len(), NAME_MAX);
    }

    #[test]
    fn dropped_it_is_gone_renamed_it_is_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let fd = open_dir(dir.path());
        let temp = TempFile::create(fd.as_fd(), OsStr::new("f"), 0o600).unwrap();
        drop(temp);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let temp = TempFile::create(fd.as_fd(), OsStr::new("f"), 0o600).unwrap();
        io::Write::write_all(&mut temp.file(), b"new").unwrap();
        temp.rename_over(OsStr::new("f")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
