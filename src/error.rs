//! The errors a tool can answer with. Each variant knows its `error_code` and
//! its message; the texts are those of seed 000, which hosts and models rely
//! on byte for byte.

use std::fmt;
use std::io;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// Stdin or `$1` is not one JSON object. The text says what is wrong.
    InvalidJson(String),
    /// A parameter is missing, of the wrong type or out of range.
    InvalidArg(String),
    FileNotFound(String),
    PermissionDenied(String),
    OpenFailed(String),
    ReadFailed(String),
    WriteFailed(String),
    SeekFailed(String),
    SizeFailed(String),
    NoSpace(String),
    /// file_edit: another edit held the file locked too long; nothing was
    /// written. (`WRITE_FAILED`, with the seed's message and why.)
    EditLocked(String),
    /// A regular expression that does not compile; the text is the regex
    /// error, folded onto one line.
    InvalidRegex(String),
    /// A malformed glob pattern (glob's `pattern`, grep's `glob`).
    InvalidGlob,
    /// A glob pattern too large to be taken: the text says what is too
    /// large and the bound (`fs::pattern`).
    GlobTooLarge(String),
    /// file_edit: `old_string` does not occur.
    NotFound,
    /// file_edit: `old_string` occurs this many times and `replace_all` is off.
    NotUnique(usize),
    /// A buffer the file needs could not be had: the file is too large
    /// for the memory the process may use. (`OUT_OF_MEMORY`, seed 000's
    /// description of the code as its message.)
    AllocationFailed,
}

impl ToolError {
    /// The `error_code` of the envelope.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::InvalidJson(_) => "INVALID_JSON",
            ToolError::InvalidArg(_) => "INVALID_ARG",
            ToolError::FileNotFound(_) => "FILE_NOT_FOUND",
            ToolError::PermissionDenied(_) => "PERMISSION_DENIED",
            ToolError::OpenFailed(_) => "OPEN_FAILED",
            ToolError::ReadFailed(_) => "READ_FAILED",
            ToolError::WriteFailed(_) | ToolError::EditLocked(_) => "WRITE_FAILED",
            ToolError::SeekFailed(_) => "SEEK_FAILED",
            ToolError::SizeFailed(_) => "SIZE_FAILED",
            ToolError::NoSpace(_) => "NO_SPACE",
            ToolError::InvalidRegex(_) | ToolError::InvalidGlob | ToolError::GlobTooLarge(_) => {
                "INVALID_PATTERN"
            }
            ToolError::NotFound => "NOT_FOUND",
            ToolError::NotUnique(_) => "NOT_UNIQUE",
            ToolError::AllocationFailed => "OUT_OF_MEMORY",
        }
    }

    /// Whether the error is about the call itself (bad JSON, bad arguments)
    /// rather than the operation; such errors are echoed on stderr in both
    /// dialects so that a human watching the host sees them too.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, ToolError::InvalidJson(_) | ToolError::InvalidArg(_))
    }

    /// Classifies an I/O error met while opening or reading `path`:
    /// ENOENT and EACCES get their own codes, ENOSPC too, anything else
    /// becomes `other(path)`.
    pub fn from_io(err: &io::Error, path: &str, other: fn(String) -> ToolError) -> ToolError {
        match err.raw_os_error() {
            Some(libc::ENOENT) => ToolError::FileNotFound(path.to_owned()),
            Some(libc::EACCES) | Some(libc::EPERM) => ToolError::PermissionDenied(path.to_owned()),
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => ToolError::NoSpace(path.to_owned()),
            Some(libc::ENOMEM) => ToolError::AllocationFailed,
            _ => other(path.to_owned()),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidJson(m) | ToolError::InvalidArg(m) => f.write_str(m),
            ToolError::FileNotFound(p) => write!(f, "File not found: {p}"),
            ToolError::PermissionDenied(p) => write!(f, "Permission denied: {p}"),
            ToolError::OpenFailed(p) => write!(f, "Cannot open file: {p}"),
            ToolError::ReadFailed(p) => write!(f, "Failed to read file: {p}"),
            ToolError::WriteFailed(p) => write!(f, "Failed to write file: {p}"),
            ToolError::EditLocked(p) => write!(
                f,
                "Failed to write file: {p} (another edit kept it locked; nothing was changed, try again)"
            ),
            ToolError::SeekFailed(p) => write!(f, "Cannot seek file: {p}"),
            ToolError::SizeFailed(p) => write!(f, "Cannot get file size: {p}"),
            ToolError::NoSpace(p) => write!(f, "No space left on device: {p}"),
            ToolError::InvalidRegex(m) => write!(f, "Invalid pattern: {m}"),
            ToolError::InvalidGlob => f.write_str("Invalid glob pattern"),
            ToolError::GlobTooLarge(m) => write!(f, "Invalid glob pattern: {m}"),
            ToolError::NotFound => f.write_str("String not found in file"),
            ToolError::NotUnique(n) => {
                write!(f, "String found {n} times, use replace_all to replace all")
            }
            ToolError::AllocationFailed => f.write_str("Memory allocation failed"),
        }
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_codes_are_those_of_seed_000() {
        let cases = [
            (ToolError::FileNotFound("/a".into()), "FILE_NOT_FOUND", "File not found: /a"),
            (
                ToolError::NotUnique(3),
                "NOT_UNIQUE",
                "String found 3 times, use replace_all to replace all",
            ),
            (ToolError::InvalidGlob, "INVALID_PATTERN", "Invalid glob pattern"),
            (
                ToolError::GlobTooLarge("pattern is 9000 bytes long".into()),
                "INVALID_PATTERN",
                "Invalid glob pattern: pattern is 9000 bytes long",
            ),
            (
                ToolError::SizeFailed("/dev/zero".into()),
                "SIZE_FAILED",
                "Cannot get file size: /dev/zero",
            ),
        ];
        for (err, code, msg) in cases {
            assert_eq!(err.code(), code);
            assert_eq!(err.to_string(), msg);
        }
    }

    #[test]
    fn io_errors_are_classified_by_errno() {
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        let eisdir = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(
            ToolError::from_io(&enoent, "x", ToolError::OpenFailed),
            ToolError::FileNotFound("x".into())
        );
        assert_eq!(
            ToolError::from_io(&eacces, "x", ToolError::OpenFailed),
            ToolError::PermissionDenied("x".into())
        );
        assert_eq!(
            ToolError::from_io(&eisdir, "x", ToolError::ReadFailed),
            ToolError::ReadFailed("x".into())
        );
    }
}
