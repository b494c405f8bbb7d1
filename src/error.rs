//! The errors a tool can answer with. Each variant knows its `error_code` and
//! its message; the texts are those of docs/SPEC.md, which hosts and models rely
//! on byte for byte, and after the path, in parentheses, why (a [`Why`]):
//! `Cannot open file: d (it is a directory)`. Every message is made here.

use std::fmt;
use std::io;

use crate::json::Field;

/// What a [`ToolError::Detailed`] adds to its error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    pub error: ToolError,
    /// Told after the error's message, in parentheses.
    pub note: Option<String>,
    /// The envelope's fields after `error_code`, in this order.
    pub fields: Vec<(&'static str, Field)>,
}

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
    /// error on one line, saying what is wrong and where
    /// (`tools::grep::regex_error`).
    InvalidRegex(String),
    /// A malformed glob pattern (glob's `pattern`, grep's `glob`): what is
    /// wrong, and where.
    InvalidGlob(GlobFault),
    /// A glob pattern too large to be taken: the text says what is too
    /// large and the bound (`fs::pattern`).
    GlobTooLarge(String),
    /// file_edit: `old_string` does not occur.
    NotFound,
    /// file_edit: `old_string` occurs this many times and `replace_all` is off.
    NotUnique(usize),
    /// apply_patch: a hunk's lines are not in the file; the text names the
    /// file, the hunk, the line that diverged and the closest one found.
    /// (`NOT_FOUND`, as file_edit's string not found.)
    HunkNotFound(String),
    /// file_write and file_edit (full profile): the file's content is not
    /// the version `expected_sha256` names: it changed since it was read.
    /// Nothing was written.
    Stale(String),
    /// file_write (full profile): `expected_sha256` `""` said the file must
    /// not exist, and it does. Nothing was written. (`STALE`: the version
    /// found is not the one expected.)
    Exists(String),
    /// web_fetch (full profile): the page's HTML holds no readable text,
    /// only scripts that would make it (docs/TOOLS.md, "web_fetch"); the
    /// message names the URL and the title. (`JS_REQUIRED`.)
    JsRequired(String),
    /// An error that tells more (full profile only): the error itself, a
    /// note its message adds in parentheses, and fields its envelope
    /// carries after `error_code` (docs/SPEC.md, "Error codes"). Its code
    /// is the error's.
    Detailed(Box<Detail>),
    /// A buffer the file needs could not be had: the file is too large
    /// for the memory the process may use. (`OUT_OF_MEMORY`, docs/SPEC.md's
    /// description of the code as its message.)
    AllocationFailed,
    /// job_output, job_kill (full profile): no job of this id in the
    /// caller's namespace (another agent's or session's is never seen).
    JobNotFound(String),
    // The web tools' client (src/web/); its messages are made there, one
    // line each, naming the URL or host and the setting that changes it.
    /// An address a URL's host resolves to is in a refused range and not
    /// allowed by `IKIGAI_TOOLS_FETCH_ALLOW`. (`PERMISSION_DENIED`.)
    AddressRefused(String),
    /// DNS, connect, TLS, a timeout, too many redirects, a decompression
    /// bomb. (`NETWORK_ERROR`, upstream ikigai's code.)
    NetworkError(String),
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
            ToolError::InvalidRegex(_) | ToolError::InvalidGlob(_) | ToolError::GlobTooLarge(_) => {
                "INVALID_PATTERN"
            }
            ToolError::NotFound | ToolError::HunkNotFound(_) => "NOT_FOUND",
            ToolError::NotUnique(_) => "NOT_UNIQUE",
            ToolError::JsRequired(_) => "JS_REQUIRED",
            ToolError::Stale(_) | ToolError::Exists(_) => "STALE",
            ToolError::AllocationFailed => "OUT_OF_MEMORY",
            ToolError::Detailed(detail) => detail.error.code(),
            ToolError::JobNotFound(_) => "JOB_NOT_FOUND",
            ToolError::AddressRefused(_) => "PERMISSION_DENIED",
            ToolError::NetworkError(_) => "NETWORK_ERROR",
        }
    }

    /// The error with a note after its message and fields in its envelope
    /// (full profile).
    pub fn detailed(self, note: Option<String>, fields: Vec<(&'static str, Field)>) -> ToolError {
        ToolError::Detailed(Box::new(Detail { error: self, note, fields }))
    }

    /// The fields the envelope carries after `error_code`: none but for a
    /// detailed error.
    pub fn fields(&self) -> &[(&'static str, Field)] {
        match self {
            ToolError::Detailed(detail) => &detail.fields,
            _ => &[],
        }
    }

    /// Whether the error is about the call itself (bad JSON, bad arguments)
    /// rather than the operation; such errors are echoed on stderr in both
    /// dialects so that a human watching the host sees them too.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ToolError::Detailed(detail) => detail.error.is_bad_input(),
            other => matches!(other, ToolError::InvalidJson(_) | ToolError::InvalidArg(_)),
        }
    }

    /// Classifies an I/O error met while opening or reading `path`:
    /// ENOENT and EACCES get their own codes, ENOSPC too, anything else
    /// becomes `other(path)` with the system's reason (`Why::Os`).
    pub fn from_io(err: &io::Error, path: &str, other: fn(String) -> ToolError) -> ToolError {
        match err.raw_os_error() {
            Some(libc::ENOENT) => ToolError::FileNotFound(path.to_owned()),
            Some(libc::EACCES) | Some(libc::EPERM) => ToolError::PermissionDenied(path.to_owned()),
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => ToolError::NoSpace(path.to_owned()),
            Some(libc::ENOMEM) => ToolError::AllocationFailed,
            Some(errno) => other(path.to_owned()).because(Why::Os(errno)),
            None => other(path.to_owned()),
        }
    }

    /// The same error with why after its path, `Cannot open file: d (it
    /// is a directory)`: for the errors whose code does not say it
    /// (`OPEN_FAILED`, `READ_FAILED`, `WRITE_FAILED`, `SEEK_FAILED`,
    /// `SIZE_FAILED`); any other error is returned as it is.
    pub fn because(self, why: Why) -> ToolError {
        let told = |path: String| format!("{path} ({})", why.told());
        match self {
            ToolError::OpenFailed(p) => ToolError::OpenFailed(told(p)),
            ToolError::ReadFailed(p) => ToolError::ReadFailed(told(p)),
            ToolError::WriteFailed(p) => ToolError::WriteFailed(told(p)),
            ToolError::SeekFailed(p) => ToolError::SeekFailed(told(p)),
            ToolError::SizeFailed(p) => ToolError::SizeFailed(told(p)),
            other => other,
        }
    }
}

/// Why an operation on a path failed, told after the path in parentheses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The directory the file would be in does not exist: the directory
    /// named (the path's own parent), or `None` when it is another one
    /// (the path leads through a symbolic link).
    NoDirectory(Option<String>),
    /// A path ending in `/`, which names a directory, never a file.
    TrailingSlash,
    /// The path names something that is not a regular file.
    Kind(Kind),
    /// An error of the system (an errno).
    Os(i32),
}

/// What a path names, when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Directory,
    CharDevice,
    BlockDevice,
    Fifo,
    Socket,
    Symlink,
    /// A kind the system does not say, or a new one.
    Other,
}

impl Kind {
    /// The kind of a file of type `mode & S_IFMT` (`st_mode`).
    pub fn of_mode(mode: u32) -> Kind {
        match mode & libc::S_IFMT {
            libc::S_IFDIR => Kind::Directory,
            libc::S_IFCHR => Kind::CharDevice,
            libc::S_IFBLK => Kind::BlockDevice,
            libc::S_IFIFO => Kind::Fifo,
            libc::S_IFSOCK => Kind::Socket,
            libc::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        }
    }

    /// The kind of a file of type `file_type`.
    pub fn of_type(file_type: std::fs::FileType) -> Kind {
        use std::os::unix::fs::FileTypeExt;
        match file_type {
            t if t.is_dir() => Kind::Directory,
            t if t.is_char_device() => Kind::CharDevice,
            t if t.is_block_device() => Kind::BlockDevice,
            t if t.is_fifo() => Kind::Fifo,
            t if t.is_socket() => Kind::Socket,
            t if t.is_symlink() => Kind::Symlink,
            _ => Kind::Other,
        }
    }
}

impl Why {
    /// The reason, as told after the path.
    fn told(&self) -> String {
        match self {
            Why::NoDirectory(Some(dir)) => format!("the directory {dir} does not exist"),
            Why::NoDirectory(None) => "the directory it would be in does not exist".to_owned(),
            Why::TrailingSlash => "a path ending in '/' names a directory, not a file".to_owned(),
            Why::Kind(kind) => kind_told(*kind).to_owned(),
            Why::Os(errno) => os_told(*errno),
        }
    }
}

fn kind_told(kind: Kind) -> &'static str {
    match kind {
        Kind::Directory => "it is a directory",
        Kind::CharDevice => "a character device, not a regular file",
        Kind::BlockDevice => "a block device, not a regular file",
        Kind::Fifo => "a FIFO (named pipe), not a regular file",
        Kind::Socket => "a socket, not a regular file",
        Kind::Symlink => "a symbolic link, not a regular file",
        Kind::Other => "not a regular file",
    }
}

/// An errno in words: ours for the errors a tool meets on a path, the
/// system's (`strerror`, first letter lowered) for the rest.
fn os_told(errno: i32) -> String {
    let ours = match errno {
        libc::EISDIR => kind_told(Kind::Directory),
        libc::ENOTDIR => "a part of the path is not a directory",
        libc::ELOOP => "too many levels of symbolic links",
        libc::ENAMETOOLONG => "the path or a name in it is too long",
        libc::EROFS => "the file system is read-only",
        libc::ETXTBSY => "it is a program being run",
        libc::EFBIG => {
            "it would pass the largest file size allowed (ulimit -f, or the file system's)"
        }
        libc::EIO => "an input/output error",
        libc::EAGAIN => "it has no data ready, and reading it would wait",
        libc::ENXIO => "no such device or address (a socket, or a device that is not there)",
        _ => {
            let text = io::Error::from_raw_os_error(errno).to_string();
            let text = text.split(" (os error").next().unwrap_or_default();
            let mut chars = text.chars();
            return match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => format!("error {errno}"),
            };
        }
    };
    ours.to_owned()
}

/// What is wrong with a malformed glob pattern, and where: a position
/// counts characters from 0, as Python's `re` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GlobFault {
    /// A `[` with no `]` to close it.
    UnclosedClass(usize),
    /// A `{` with no `}` to close it.
    UnclosedBrace(usize),
    /// A `}` that closes no `{`.
    UnopenedBrace(usize),
    /// A `\` that ends the pattern.
    DanglingEscape(usize),
    /// A `\` before a `/`, which separates names and cannot be escaped.
    EscapedSlash(usize),
    /// A `[...]` that holds a `/`: a name never holds one.
    SlashInClass(usize),
    /// A range `[z-a]` whose end comes before its start.
    BackwardRange { at: usize, from: char, to: char },
    /// What else is wrong, in words.
    Other(String),
}

impl fmt::Display for GlobFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlobFault::UnclosedClass(at) => write!(f, "unclosed '[' at position {at}"),
            GlobFault::UnclosedBrace(at) => write!(f, "unclosed '{{' at position {at}"),
            GlobFault::UnopenedBrace(at) => {
                write!(f, "'}}' at position {at} closes no '{{' (escape it as '\\}}')")
            }
            GlobFault::DanglingEscape(at) => {
                write!(f, "'\\' at position {at} ends the pattern and escapes nothing")
            }
            GlobFault::EscapedSlash(at) => {
                write!(
                    f,
                    "'\\' at position {at} escapes '/', which separates names and cannot be \
                     escaped"
                )
            }
            GlobFault::SlashInClass(at) => {
                write!(f, "the '[' at position {at} holds a '/', which no name contains")
            }
            GlobFault::BackwardRange { at, from, to } => write!(
                f,
                "invalid range '{from}-{to}' at position {at} ('{from}' comes after '{to}')"
            ),
            GlobFault::Other(why) => f.write_str(why),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidJson(m) | ToolError::InvalidArg(m) | ToolError::HunkNotFound(m) => {
                f.write_str(m)
            }
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
            ToolError::InvalidGlob(fault) => write!(f, "Invalid glob pattern: {fault}"),
            ToolError::GlobTooLarge(m) => write!(f, "Invalid glob pattern: {m}"),
            ToolError::NotFound => f.write_str("String not found in file"),
            ToolError::JsRequired(m) => f.write_str(m),
            ToolError::NotUnique(n) => {
                write!(f, "String found {n} times, use replace_all to replace all")
            }
            ToolError::Stale(p) => write!(
                f,
                "File changed since it was read: {p} (its sha256 is not expected_sha256; read it \
                 again, nothing was written)"
            ),
            ToolError::Exists(p) => write!(
                f,
                "File exists: {p} (expected_sha256 \"\" means the file must not exist; nothing \
                 was written: to replace it, pass the sha256 file_read answers, or leave \
                 expected_sha256 out)"
            ),
            ToolError::AllocationFailed => f.write_str("Memory allocation failed"),
            ToolError::JobNotFound(id) => write!(
                f,
                "Job not found: {id} (no such job of this agent or session: it ended and was \
                 read, expired, or never was; job_list shows the jobs)"
            ),
            ToolError::AddressRefused(m) | ToolError::NetworkError(m) => f.write_str(m),
            ToolError::Detailed(detail) => match &detail.note {
                Some(note) => write!(f, "{} ({note})", detail.error),
                None => detail.error.fmt(f),
            },
        }
    }
}

impl std::error::Error for ToolError {}

/// Folds a message onto one line, for stderr and for the messages of other
/// libraries' errors (a regex's, a glob's) told in a tool's error.
pub fn one_line(text: &str) -> String {
    text.split(['\n', '\r']).map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_folds_multiline_errors() {
        assert_eq!(
            one_line("regex parse error:\n    (\n    ^\nerror: unclosed group"),
            "regex parse error: ( ^ error: unclosed group"
        );
    }

    #[test]
    fn messages_and_codes_are_those_of_seed_000() {
        let cases = [
            (ToolError::FileNotFound("/a".into()), "FILE_NOT_FOUND", "File not found: /a"),
            (
                ToolError::NotUnique(3),
                "NOT_UNIQUE",
                "String found 3 times, use replace_all to replace all",
            ),
            (
                ToolError::InvalidGlob(GlobFault::UnclosedClass(3)),
                "INVALID_PATTERN",
                "Invalid glob pattern: unclosed '[' at position 3",
            ),
            (
                ToolError::GlobTooLarge("pattern is 9000 bytes long".into()),
                "INVALID_PATTERN",
                "Invalid glob pattern: pattern is 9000 bytes long",
            ),
            (
                ToolError::Stale("a.txt".into()),
                "STALE",
                "File changed since it was read: a.txt (its sha256 is not expected_sha256; read \
                 it again, nothing was written)",
            ),
            (
                ToolError::Exists("a.txt".into()),
                "STALE",
                "File exists: a.txt (expected_sha256 \"\" means the file must not exist; \
                 nothing was written: to replace it, pass the sha256 file_read answers, or leave \
                 expected_sha256 out)",
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
    fn the_reason_follows_the_seed_message() {
        let cases = [
            (
                ToolError::OpenFailed("a/b.txt".into()).because(Why::NoDirectory(Some("a".into()))),
                "OPEN_FAILED",
                "Cannot open file: a/b.txt (the directory a does not exist)",
            ),
            (
                ToolError::OpenFailed("d".into()).because(Why::Kind(Kind::Directory)),
                "OPEN_FAILED",
                "Cannot open file: d (it is a directory)",
            ),
            (
                ToolError::OpenFailed("d/".into()).because(Why::TrailingSlash),
                "OPEN_FAILED",
                "Cannot open file: d/ (a path ending in '/' names a directory, not a file)",
            ),
            (
                ToolError::SizeFailed("/dev/null".into()).because(Why::Kind(Kind::CharDevice)),
                "SIZE_FAILED",
                "Cannot get file size: /dev/null (a character device, not a regular file)",
            ),
            (
                ToolError::ReadFailed("f".into()).because(Why::Os(libc::EIO)),
                "READ_FAILED",
                "Failed to read file: f (an input/output error)",
            ),
            (
                ToolError::WriteFailed("f".into()).because(Why::Os(libc::EBADF)),
                "WRITE_FAILED",
                "Failed to write file: f (bad file descriptor)",
            ),
            // The codes that say why already are left as they are.
            (
                ToolError::FileNotFound("f".into()).because(Why::Kind(Kind::Fifo)),
                "FILE_NOT_FOUND",
                "File not found: f",
            ),
        ];
        for (err, code, msg) in cases {
            assert_eq!(err.code(), code);
            assert_eq!(err.to_string(), msg);
        }
    }

    #[test]
    fn a_detailed_error_keeps_its_code_and_adds_its_note_and_fields() {
        let fields = vec![("edit", Field::Int(2))];
        let err =
            ToolError::NotUnique(3).detailed(Some("edits[2].old_string".into()), fields.clone());
        assert_eq!(err.code(), "NOT_UNIQUE");
        assert_eq!(
            err.to_string(),
            "String found 3 times, use replace_all to replace all (edits[2].old_string)"
        );
        assert_eq!(err.fields(), fields);
        assert!(!err.is_bad_input());
        let bad = ToolError::InvalidArg("x".into()).detailed(None, Vec::new());
        assert_eq!((bad.to_string().as_str(), bad.is_bad_input()), ("x", true));
        assert!(ToolError::NotFound.fields().is_empty());
    }

    #[test]
    fn glob_faults_say_what_and_where() {
        let cases = [
            (GlobFault::UnclosedBrace(0), "unclosed '{' at position 0"),
            (GlobFault::UnopenedBrace(1), r"'}' at position 1 closes no '{' (escape it as '\}')"),
            (
                GlobFault::DanglingEscape(1),
                r"'\' at position 1 ends the pattern and escapes nothing",
            ),
            (
                GlobFault::BackwardRange { at: 1, from: 'z', to: 'a' },
                "invalid range 'z-a' at position 1 ('z' comes after 'a')",
            ),
        ];
        for (fault, told) in cases {
            assert_eq!(fault.to_string(), told);
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
            ToolError::ReadFailed("x (it is a directory)".into())
        );
    }
}
