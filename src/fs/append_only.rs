//! Append-only directories (`chattr +a`): new entries may be made in them,
//! but none renamed or removed. A temporary file made there could neither
//! be renamed over the target nor removed, so a write there makes none.

use std::fs::File;
use std::path::Path;

use rustix::fs::{ioctl_getflags, IFlags};

/// Whether `dir` is append-only, as far as can be told: a directory we
/// may not open, or a file system without inode flags, is taken as not.
pub fn is_append_only(dir: &Path) -> bool {
    File::open(dir)
        .ok()
        .and_then(|d| ioctl_getflags(&d).ok())
        .is_some_and(|flags| flags.contains(IFlags::APPEND))
}
