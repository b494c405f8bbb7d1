//! Listing a directory with `getdents64` (rustix's `RawDir`): one system
//! call fills a buffer with many entries, their names and types (no `stat`
//! per entry where the file system says what an entry is), and the buffer
//! is reused from directory to directory.

use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{open, statat, AtFlags, FileType, Mode, OFlags, RawDir};

use super::Kind;

/// Room for directory entries read at once (glibc's readdir uses 32 KiB).
const DIRENT_BUFFER: usize = 32 * 1024;

/// The buffer `getdents64` fills, reused for every directory listed.
pub(super) struct Dirents {
    buffer: Vec<MaybeUninit<u8>>,
}

impl Dirents {
    pub(super) fn new() -> Dirents {
        Dirents { buffer: vec![MaybeUninit::uninit(); DIRENT_BUFFER] }
    }

    /// Calls `each` with the name and kind of every entry of the directory
    /// at `path` but `.` and `..`; false if the directory cannot be opened.
    /// A read error part way ends the listing with the entries read so far.
    pub(super) fn list_path(&mut self, path: &OsStr, each: &mut impl FnMut(&[u8], Kind)) -> bool {
        // O_DIRECTORY: anything else fails at once (a FIFO is never opened).
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let Ok(dir) = open(path, flags, Mode::empty()) else {
            return false;
        };
        self.list(dir.as_fd(), each);
        true
    }

    /// Lists the open directory `dir` as `list_path` does.
    pub(super) fn list(&mut self, dir: BorrowedFd<'_>, each: &mut impl FnMut(&[u8], Kind)) {
        let mut entries = RawDir::new(dir, &mut self.buffer);
        while let Some(Ok(entry)) = entries.next() {
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::RegularFile => Kind::File,
                FileType::Directory => Kind::Dir,
                FileType::Symlink => Kind::Symlink,
                // Some file systems do not say: ask.
                FileType::Unknown => match kind_at(dir, name) {
                    Some(kind) => kind,
                    None => continue,
                },
                _ => Kind::Other,
            };
            each(name, kind);
        }
    }
}

/// The kind of the entry `name` of `dir` (not following a symlink); `None`
/// if it has gone.
pub(super) fn kind_at(dir: BorrowedFd<'_>, name: &[u8]) -> Option<Kind> {
    let stat = statat(dir, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    })
}
