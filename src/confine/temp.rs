//! The sandbox's private temporary directory.
//!
//! A confined command may not write the shared temporary directory: a
//! root under `/tmp` (a `mktemp -d` workspace) could then be renamed away
//! and replaced by a link to `/`, and the next call would open the link
//! (docs/CONFINEMENT.md). It gets a directory of its own
//! user's instead, `ikigai-tools-UID` in the temporary directory, which it
//! may write beneath but not rename, and which is its `TMPDIR`: what one
//! call leaves there, the next finds. It is the user's, not a call's: every
//! confined call of the user with the same temporary directory shares it,
//! whatever its session or agent.
//!
//! Fail closed: the directory is used only when it is a real directory
//! (not a link), owned by the effective user, with no group or other
//! permission bits. One the user made wrong is refused with what is wrong;
//! one another user made first in a shared `/tmp` is passed over for
//! `ikigai-tools-UID.XXXXXX`, the user's own (`private_dir`), so that
//! nobody can stop another user's confined calls by squatting the name.

#[cfg(test)]
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::error::ConfineError;
use crate::private_dir::{self, PrivateDir};

/// `$TMPDIR` when it is an absolute path, else `/tmp`: where the private
/// directory is made.
pub fn base_dir() -> PathBuf {
    std::env::var_os("TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// The fixed name of the private directory: `ikigai-tools-UID`.
fn name() -> String {
    format!("ikigai-tools-{}", rustix::process::geteuid().as_raw())
}

/// The sandbox's private temporary directory, made if need be: its path
/// and a descriptor it was checked through.
pub fn open_sandbox_temp() -> Result<PrivateDir, ConfineError> {
    let base = base_dir();
    private_dir::open_own(&base, &name()).map_err(|why| refusal(&base.join(name()), &why))
}

/// The sandbox's private temporary directory if there is one (nothing is
/// made): what a confined command may write besides its roots.
pub fn find_sandbox_temp() -> Option<PrivateDir> {
    private_dir::find_own(&base_dir(), &name())
}

/// The private directory at exactly `path`, made (mode 0700) if missing;
/// refused unless it is a directory of the effective user's own that no
/// one else may enter (the tests' own directories).
#[cfg(test)]
pub fn open_private(path: &Path) -> Result<OwnedFd, ConfineError> {
    private_dir::open_exact_at(rustix::fs::CWD, path).map_err(|why| refusal(path, &why))
}

fn refusal(path: &Path, why: &private_dir::Refused) -> ConfineError {
    ConfineError::Unsupported(format!(
        "the sandbox's temporary directory {} {}",
        path.display(),
        why.describe()
    ))
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
