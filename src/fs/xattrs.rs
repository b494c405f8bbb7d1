//! Extended attributes carried from a file to the new file that replaces
//! it: `user.*` attributes, and the ACL (`system.posix_acl_access` is an
//! extended attribute too). Without its ACL, a file whose ACL grants a
//! named user access would keep the ACL's mask as its group bits: the group
//! would gain what the mask allowed the named entries. So a file whose
//! attributes cannot be copied is written in place instead.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{fgetxattr_query, fremovexattr, fsetxattr, getxattr, listxattr, XattrFlags};
use rustix::io::Errno;

/// The access ACL, as an extended attribute.
const ACCESS_ACL: &[u8] = b"system.posix_acl_access";
/// File capabilities: any write of a file drops them (the kernel does), so
/// a write never carries them to new content.
const CAPABILITIES: &[u8] = b"security.capability";

/// The largest list or value Linux has (XATTR_LIST_MAX, XATTR_SIZE_MAX).
const LARGEST: usize = 64 * 1024;

/// Gives `to` the extended attributes of the file at `from`, and no ACL if
/// `from` has none (a new file inherits its directory's default ACL). An
/// error means they could not all be copied.
pub fn copy(from: &Path, to: &File) -> io::Result<()> {
    let names = names(from)?;
    let mut has_acl = false;
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        has_acl |= name == ACCESS_ACL;
        if name == CAPABILITIES {
            continue;
        }
        let name = OsStr::from_bytes(name);
        let value = value(from, name)?;
        fsetxattr(to, name, &value, XattrFlags::empty())?;
    }
    if !has_acl && fgetxattr_query(to, OsStr::from_bytes(ACCESS_ACL)).is_ok() {
        fremovexattr(to, OsStr::from_bytes(ACCESS_ACL))?;
    }
    Ok(())
}

/// The names of `path`'s attributes, each ended by a NUL byte. A file
/// system without extended attributes has none.
fn names(path: &Path) -> io::Result<Vec<u8>> {
    sized(|buf| match listxattr(path, buf) {
        Err(Errno::NOTSUP) => Ok(0),
        other => other,
    })
}

fn value(path: &Path, name: &OsStr) -> io::Result<Vec<u8>> {
    sized(|buf| getxattr(path, name, buf))
}

/// Calls `get` with a buffer large enough for what it returns (too small
/// is ERANGE: then twice as large).
fn sized(get: impl Fn(&mut [u8]) -> rustix::io::Result<usize>) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    loop {
        match get(&mut buf) {
            Ok(len) => {
                buf.truncate(len);
                return Ok(buf);
            }
            Err(Errno::RANGE) if buf.len() < LARGEST => buf = vec![0u8; 2 * buf.len()],
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_attributes_are_copied_and_no_acl_is_added() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        std::fs::write(&from, "x").unwrap();
        if let Err(e) = rustix::fs::setxattr(&from, "user.kept", b"value", XattrFlags::empty()) {
            eprintln!("skipped: this file system takes no user attributes ({e})");
            return;
        }
        let to = File::create(dir.path().join("to")).unwrap();
        copy(&from, &to).unwrap();
        let mut buf = [0u8; 16];
        let len = rustix::fs::fgetxattr(&to, "user.kept", &mut buf[..]).unwrap();
        assert_eq!(&buf[..len], b"value");
        assert!(fgetxattr_query(&to, OsStr::from_bytes(ACCESS_ACL)).is_err());
    }
}
