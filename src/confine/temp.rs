//! The sandbox's private temporary directory.
//!
//! A confined command may not write the shared temporary directory: a
//! root under `/tmp` (a `mktemp -d` workspace) could then be renamed away
//! and replaced by a link to `/`, and the next call would open the link
//! (docs/CONFINEMENT.md). It gets a directory of its own
//! user's instead, `ikigai-tools-UID` in the temporary directory, which it
//! may write beneath but not rename, and which is its `TMPDIR`: what one
//! call leaves there, the next finds.
//!
//! Fail closed: the directory is used only when it is a real directory
//! (not a link), owned by the effective user, with no group or other
//! permission bits; anything else (a directory another user made first in
//! a shared `/tmp`) is refused with what is wrong.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{fstat, mkdir, open, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::error::ConfineError;

/// `$TMPDIR` when it is an absolute path, else `/tmp`: where the private
/// directory is made.
pub fn base_dir() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// The sandbox's private temporary directory (not created here).
pub fn sandbox_temp_dir() -> PathBuf {
    base_dir().join(format!("ikigai-tools-{}", rustix::process::geteuid().as_raw()))
}

/// The private directory at `path` (`sandbox_temp_dir`), created (mode
/// 0700) if missing, and a descriptor of it; refused unless it is a
/// directory of the effective user's own that no one else may enter.
pub fn open_private(path: &Path) -> Result<OwnedFd, ConfineError> {
    let refuse = |why: String| {
        ConfineError::Unsupported(format!(
            "the sandbox's temporary directory {} {why}",
            path.display()
        ))
    };
    match mkdir(path, Mode::RWXU) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(refuse(format!("cannot be made ({})", std::io::Error::from(e)))),
    }
    // O_NOFOLLOW: a link planted at the name is refused (ELOOP or
    // ENOTDIR), never followed.
    let fd = open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => refuse("is not a directory (a link or a file)".to_owned()),
        e => refuse(format!("cannot be opened ({})", std::io::Error::from(e))),
    })?;
    let stat = fstat(&fd)
        .map_err(|e| refuse(format!("cannot be examined ({})", std::io::Error::from(e))))?;
    let euid = rustix::process::geteuid().as_raw();
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return Err(refuse("is not a directory".to_owned()));
    }
    if stat.st_uid != euid {
        return Err(refuse(format!("belongs to uid {}, not to uid {euid}", stat.st_uid)));
    }
    if stat.st_mode & 0o077 != 0 {
        return Err(refuse(format!(
            "is open to other users (mode {:o}; 700 is needed)",
            stat.st_mode & 0o7777
        )));
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_private_directory_is_made_mode_700_and_reused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("ikigai-tools-x");
        open_private(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::write(dir.join("kept"), "x").unwrap();
        open_private(&dir).unwrap();
        assert!(dir.join("kept").exists());
    }

    #[test]
    fn a_link_a_file_or_an_open_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let link = t.path().join("link");
        std::os::unix::fs::symlink(t.path(), &link).unwrap();
        let e = open_private(&link).unwrap_err().message();
        assert!(e.contains("is not a directory (a link or a file)"), "{e}");
        let file = t.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(open_private(&file).is_err());
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = open_private(&open).unwrap_err().message();
        assert!(e.contains("is open to other users (mode 755"), "{e}");
        assert!(e.ends_with("refusing to run unconfined"), "{e}");
    }
}
