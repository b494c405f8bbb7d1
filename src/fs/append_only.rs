//! Append-only directories (`chattr +a`): new entries may be made in them,
//! but none renamed or removed. A temporary file made there could neither
//! be renamed over the target nor removed, so a write there makes none.

use std::os::fd::BorrowedFd;

use rustix::fs::{ioctl_getflags, IFlags};

/// Whether the directory `dir` is append-only, as far as can be told: a
/// directory held as `O_PATH` (one we may not read), or a file system
/// without inode flags, is taken as not.
pub fn is_append_only(dir: BorrowedFd<'_>) -> bool {
    ioctl_getflags(dir).is_ok_and(|flags| flags.contains(IFlags::APPEND))
}
