//! A path of the patch, as OpenAI's format has it: relative, beneath
//! `workdir`. An absolute path is `INVALID_ARG` (the format's rule, which
//! the message tells); one whose `..` climbs above `workdir` is
//! `PERMISSION_DENIED` (a place the patch may not reach), whether or not
//! the call is confined. What lies beneath — links, and the allowed roots
//! when confined — is the opener's to refuse (`confine::Roots`), never
//! checked here by path.

use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;

/// A file the patch names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePath {
    /// As the patch gives it: what the answer lists.
    pub given: String,
    /// What is opened: `workdir/given`, or `given` without a workdir (then
    /// relative to the working directory, or confined, to the roots').
    pub full: String,
    /// `full` without `.` and doubled slashes: one file, one key (the
    /// order locks are taken in).
    pub key: PathBuf,
}

/// `given` checked and placed beneath `workdir`.
pub fn resolve(given: &str, workdir: Option<&str>) -> Result<FilePath, ToolError> {
    if given.is_empty() {
        return Err(ToolError::InvalidArg("a patch path is empty".to_owned()));
    }
    if given.contains('\0') {
        return Err(ToolError::InvalidArg(format!("patch path {given:?} holds a NUL byte")));
    }
    if Path::new(given).is_absolute() {
        return Err(ToolError::InvalidArg(format!(
            "patch path {given} is absolute: paths in a patch are relative (to workdir, or the \
             working directory); give it relative, or set workdir"
        )));
    }
    let mut depth = 0usize;
    for component in Path::new(given).components() {
        match component {
            Component::ParentDir if depth == 0 => {
                let base = workdir.unwrap_or("the working directory");
                return Err(ToolError::PermissionDenied(format!(
                    "{given} leads out of {base}: a patch changes files beneath workdir only"
                )));
            }
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    let full = match workdir {
        Some(dir) if dir.ends_with('/') => format!("{dir}{given}"),
        Some(dir) => format!("{dir}/{given}"),
        None => given.to_owned(),
    };
    let key = Path::new(&full).components().collect();
    Ok(FilePath { given: given.to_owned(), full, key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_placed_beneath_workdir() {
        let p = resolve("src/./a.rs", Some("/w/")).unwrap();
        assert_eq!((p.full.as_str(), p.key.to_str()), ("/w/src/./a.rs", Some("/w/src/a.rs")));
        assert_eq!(resolve("a/../b", None).unwrap().full, "a/../b");
        assert_eq!(resolve("x", Some("d")).unwrap().full, "d/x");
    }

    #[test]
    fn absolute_and_escaping_paths_are_refused() {
        let abs = resolve("/etc/passwd", Some("/w")).unwrap_err();
        assert_eq!(abs.code(), "INVALID_ARG");
        let up = resolve("a/../../x", Some("/w")).unwrap_err();
        assert_eq!(up.code(), "PERMISSION_DENIED");
        assert_eq!(
            up.to_string(),
            "Permission denied: a/../../x leads out of /w: a patch changes files beneath \
             workdir only"
        );
        assert_eq!(resolve("", None).unwrap_err().code(), "INVALID_ARG");
    }
}
