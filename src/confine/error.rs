//! Why a confined operation was refused, and how that becomes a tool error.

use std::fmt;
use std::io;

use super::source::Source;
use crate::error::ToolError;

#[derive(Debug)]
pub enum ConfineError {
    /// The path leads outside every allowed root: lexically (an absolute
    /// path elsewhere, a look-alike prefix) or as the kernel resolved it
    /// (`..` above a root, a symbolic link out, EXDEV from openat2).
    /// `set_by` is what sets the roots, which the refusal names.
    Outside { path: String, roots: String, set_by: Source },
    /// A root that cannot serve as one (missing, not a directory).
    BadRoot { root: String, reason: String },
    /// `IKIGAI_TOOLS_ROOTS` is set but names no root at all.
    NoRoots,
    /// A root whose name was resolved through a place a confined command
    /// may write (another root, the sandbox's temporary directory), and
    /// that does not end beneath a root that was not: what it names could
    /// be changed by a command (docs/CONFINEMENT.md).
    ReachedThrough { root: String, through: String },
    /// `IKIGAI_TOOLS_ROOT_FDS` (the roots an MCP server passes a call as
    /// descriptors) cannot be used; the text says why.
    BadRootFds(String),
    /// The kernel lacks what confinement needs; the text names it.
    Unsupported(String),
    /// An ordinary error inside the roots (ENOENT, EACCES, EISDIR …): the
    /// tools report it exactly as without confinement.
    Io(io::Error),
}

impl ConfineError {
    /// The text of a `PERMISSION_DENIED` answer, after "Permission denied: ".
    pub fn message(&self) -> String {
        match self {
            ConfineError::Outside { path, roots, set_by } => {
                format!("{path} is outside the allowed roots ({roots}); {}", set_by.sets_them())
            }
            ConfineError::BadRoot { root, reason } => {
                format!("allowed root {root} cannot be used: {reason}")
            }
            ConfineError::ReachedThrough { root, through } => format!(
                "allowed root {root} is reached through {through}, where a confined command \
                 could put a link in its way; refusing to run (give the root by a path that \
                 does not pass through another root, or drop one of them)"
            ),
            ConfineError::BadRootFds(why) => format!(
                "the roots passed as descriptors cannot be used ({why}); refusing to run \
                 unconfined"
            ),
            ConfineError::NoRoots => {
                "IKIGAI_TOOLS_ROOTS is set but names no directory; refusing to run unconfined"
                    .to_owned()
            }
            ConfineError::Unsupported(what) => {
                format!("confinement is on but {what}; refusing to run unconfined")
            }
            ConfineError::Io(e) => e.to_string(),
        }
    }

    /// The tool error for this refusal met on `path`: refusals are
    /// `PERMISSION_DENIED` naming the roots; an ordinary I/O error is
    /// classified as the tools do without confinement (`other` for errors
    /// without a code of their own: `OpenFailed`, `ReadFailed` …).
    pub fn into_tool_error(self, path: &str, other: fn(String) -> ToolError) -> ToolError {
        match self {
            ConfineError::Io(e) => ToolError::from_io(&e, path, other),
            refusal => ToolError::PermissionDenied(refusal.message()),
        }
    }

    /// Whether this is a refusal (as opposed to an ordinary I/O error).
    pub fn is_refusal(&self) -> bool {
        !matches!(self, ConfineError::Io(_))
    }
}

impl fmt::Display for ConfineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ConfineError {}

impl From<io::Error> for ConfineError {
    fn from(e: io::Error) -> Self {
        ConfineError::Io(e)
    }
}

impl From<rustix::io::Errno> for ConfineError {
    fn from(e: rustix::io::Errno) -> Self {
        ConfineError::Io(e.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_permission_denied_naming_the_roots_and_io_errors_keep_their_codes() {
        let outside = ConfineError::Outside {
            path: "/etc/passwd".to_owned(),
            roots: "/w/proj, /w/lib".to_owned(),
            set_by: Source::Env,
        };
        let err = outside.into_tool_error("/etc/passwd", ToolError::OpenFailed);
        assert_eq!(err.code(), "PERMISSION_DENIED");
        assert_eq!(
            err.to_string(),
            "Permission denied: /etc/passwd is outside the allowed roots (/w/proj, /w/lib); \
             IKIGAI_TOOLS_ROOTS sets them"
        );
        let missing = ConfineError::Io(io::Error::from_raw_os_error(libc::ENOENT));
        assert_eq!(
            missing.into_tool_error("a.txt", ToolError::OpenFailed),
            ToolError::FileNotFound("a.txt".to_owned())
        );
        let eisdir = ConfineError::Io(io::Error::from_raw_os_error(libc::EISDIR));
        assert_eq!(
            eisdir.into_tool_error("d", ToolError::ReadFailed),
            ToolError::ReadFailed("d (it is a directory)".to_owned())
        );
        let kernel = ConfineError::Unsupported("the kernel has no Landlock".to_owned());
        assert_eq!(
            kernel.into_tool_error("x", ToolError::OpenFailed).to_string(),
            "Permission denied: confinement is on but the kernel has no Landlock; \
             refusing to run unconfined"
        );
    }
}
