//! The sandbox's private temporary directory.
//!
//! A confined command may not write the shared temporary directory: a
//! root under `/tmp` (a `mktemp -d` workspace) could then be renamed away
//! and replaced by a link to `/`, and the next call would open the link.
//! It gets a directory of its own user's instead, `ikigai-tools-UID` in the
//! temporary directory, which it may write beneath but not rename.

use std::path::PathBuf;

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
