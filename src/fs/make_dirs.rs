//! file_write's `create_dirs` (full profile): the missing directories of
//! a path's parent made, as `mkdir -p "$(dirname PATH)"` makes them (mode
//! 0777 less the umask), and with allowed roots (docs/CONFINEMENT.md) only
//! beneath them: each directory is made in its parent opened by
//! `Roots::open_parent`, which refuses a path that leads out by `..` or by
//! a symbolic link, so nothing is ever made outside.
//!
//! From the deepest directory up, the first one that exists (or can be
//! made) is found; then the ones below it are made in order. The usual
//! case, a parent that exists, costs one `mkdir` answered EEXIST.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{mkdirat, Mode};

use crate::confine::{ConfineError, Roots};
use crate::error::ToolError;
use crate::fs::target::missing_directory;

/// Makes the missing directories of the parent of `path` (as the model gave
/// it), and answers those it made, deepest last. Errors name `path`: a
/// refusal is `PERMISSION_DENIED` (outside the roots), any other failure
/// `OPEN_FAILED` with why, as the write's own would be.
pub fn parents(path: &str, roots: Option<&Roots>) -> Result<Vec<PathBuf>, ToolError> {
    let dirs = directories(path);
    let mkdir = |dir: &Path| -> Result<bool, ConfineError> {
        let made = match roots {
            None => std::fs::DirBuilder::new().mode(0o777).create(dir),
            Some(roots) => {
                let parent = roots.open_parent(dir.to_str().unwrap_or_default())?;
                mkdirat(&parent.dir, parent.name.as_os_str(), Mode::from_raw_mode(0o777))
                    .map_err(io::Error::from)
            }
        };
        match made {
            Ok(()) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(false),
            Err(e) => Err(ConfineError::Io(e)),
        }
    };
    let failed = |e: ConfineError| match e {
        // Not even the first directory's parent was found (a working
        // directory removed): as the write would say.
        ConfineError::Io(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            ToolError::OpenFailed(path.to_owned()).because(missing_directory(path))
        }
        // Refused at one of its directories: the path the model gave is
        // what is outside.
        ConfineError::Outside { roots, set_by, .. } => {
            ConfineError::Outside { path: path.to_owned(), roots, set_by }
                .into_tool_error(path, ToolError::OpenFailed)
        }
        other => other.into_tool_error(path, ToolError::OpenFailed),
    };
    // The deepest directory that exists or could be made.
    let mut first = dirs.len();
    let mut made = Vec::new();
    while first > 0 {
        match mkdir(&dirs[first - 1]) {
            Ok(true) => {
                made.push(dirs[first - 1].clone());
                break;
            }
            Ok(false) => break,
            Err(ConfineError::Io(e)) if e.raw_os_error() == Some(libc::ENOENT) => first -= 1,
            Err(e) => return Err(failed(e)),
        }
    }
    for dir in dirs.iter().skip(first) {
        if mkdir(dir).map_err(failed)? {
            made.push(dir.clone());
        }
    }
    Ok(made)
}

/// Removes directories `parents` made (apply_patch undoing a patch that
/// failed), deepest first, each only if still empty; beneath the roots
/// when confined. What cannot be removed stays.
pub fn remove_made(made: &[PathBuf], roots: Option<&Roots>) {
    for dir in made.iter().rev() {
        let Some(dir) = dir.to_str() else { continue };
        let _ = match roots {
            None => std::fs::remove_dir(dir),
            Some(roots) => match roots.open_parent(dir) {
                Ok(parent) => rustix::fs::unlinkat(
                    &parent.dir,
                    parent.name.as_os_str(),
                    rustix::fs::AtFlags::REMOVEDIR,
                )
                .map_err(io::Error::from),
                Err(_) => continue,
            },
        };
    }
}

/// The directories leading to the parent of `path`, each a path, deepest
/// last: `a/b/f` gives `a` and `a/b`. `..`, `.` and `/` name directories
/// that exist or cannot be made, and are not among them.
fn directories(path: &str) -> Vec<PathBuf> {
    let Some(parent) = Path::new(path).parent() else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    let mut prefix = PathBuf::new();
    for component in parent.components() {
        prefix.push(component);
        if matches!(component, Component::Normal(_)) {
            dirs.push(prefix.clone());
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directories_of_a_parent_deepest_last() {
        let of = |p: &str| {
            directories(p).into_iter().map(|d| d.display().to_string()).collect::<Vec<_>>()
        };
        let none: Vec<String> = Vec::new();
        assert_eq!(of("f"), none);
        assert_eq!(of("/f"), none);
        assert_eq!(of("a/b/f"), ["a", "a/b"]);
        assert_eq!(of("/r/a/f"), ["/r", "/r/a"]);
        assert_eq!(of("./x/../y/f"), ["./x", "./x/../y"]);
    }
}
