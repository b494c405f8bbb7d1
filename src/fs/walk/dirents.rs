//! Listing a directory with `getdents64`, the walk's only `unsafe`: one
//! system call fills a buffer with many entries, their names and types
//! (no `stat` per entry where the file system says what an entry is), and
//! the buffer is reused from directory to directory.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;

use rustix::fs::{statat, AtFlags, FileType};

use super::Kind;

/// Room for directory entries read at once (glibc's readdir uses 32 KiB).
const DIRENT_BUFFER: usize = 32 * 1024;

/// The buffer `getdents64` fills, reused for every directory listed.
pub(super) struct Dirents {
    buffer: Vec<u8>,
}

impl Dirents {
    pub(super) fn new() -> Dirents {
        Dirents { buffer: vec![0; DIRENT_BUFFER] }
    }

    /// Calls `each` with the name and kind of every entry of the directory
    /// at `path` but `.` and `..`; false if the directory cannot be opened.
    /// A read error part way ends the listing with the entries read so far.
    pub(super) fn list_path(&mut self, path: &OsStr, each: &mut impl FnMut(&[u8], Kind)) -> bool {
        // O_DIRECTORY: anything else fails at once (a FIFO is never opened).
        let Ok(dir) = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(path)
        else {
            return false;
        };
        self.list(dir.as_fd(), each);
        true
    }

    /// Lists the open directory `dir` as `list_path` does.
    pub(super) fn list(&mut self, dir: BorrowedFd<'_>, each: &mut impl FnMut(&[u8], Kind)) {
        let buffer = &mut self.buffer;
        loop {
            // SAFETY: the kernel writes at most `buffer.len()` bytes of
            // `linux_dirent64` records into `buffer`, which we own.
            let read = unsafe {
                libc::syscall(
                    libc::SYS_getdents64,
                    dir.as_raw_fd(),
                    buffer.as_mut_ptr(),
                    buffer.len(),
                )
            };
            let Ok(read) = usize::try_from(read) else { break };
            if read == 0 {
                break;
            }
            for_each_dirent(&buffer[..read.min(buffer.len())], dir, each);
        }
    }
}

/// Walks the `linux_dirent64` records in `records`: `d_ino` (8 bytes),
/// `d_off` (8), `d_reclen` (2), `d_type` (1), then the name, NUL-ended.
fn for_each_dirent(records: &[u8], dir: BorrowedFd<'_>, each: &mut impl FnMut(&[u8], Kind)) {
    const NAME_AT: usize = 19;
    let mut at = 0;
    while let Some(record) = records.get(at..) {
        let (Some(&[len_lo, len_hi]), Some(&d_type)) = (record.get(16..18), record.get(18)) else {
            break;
        };
        let len = usize::from(u16::from_ne_bytes([len_lo, len_hi]));
        let Some(name) = record.get(NAME_AT..len) else { break };
        let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
        at += len;
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match d_type {
            libc::DT_REG => Kind::File,
            libc::DT_DIR => Kind::Dir,
            libc::DT_LNK => Kind::Symlink,
            // Some file systems do not say: ask.
            libc::DT_UNKNOWN => match kind_at(dir, name) {
                Some(kind) => kind,
                None => continue,
            },
            _ => Kind::Other,
        };
        each(name, kind);
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
