//! Discovery as ikigai does it (docs/SPEC.md's host side): every executable regular file of
//! each directory (hidden files skipped, symbolic links followed) is run
//! with `--schema`, all at once, each stopped after [`SCHEMA_TIMEOUT`]; a
//! schema is accepted only if it passes the six rules of docs/SPEC.md's schema format.
//!
//! The name is the schema's `name`, never the file name: the model calls
//! what the schema says. A later source overrides an earlier one by that
//! name; two files of one directory that claim the same name keep the first
//! in byte order and reject the second.

use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::registry::{Origin, RegisteredTool, Registry};
use super::validate::{self, Violation};
use crate::process::{self, Input, Status, TimedRun};

/// How long a tool has to answer `--schema` (docs/SPEC.md's host side).
pub const SCHEMA_TIMEOUT: Duration = Duration::from_secs(1);

/// The most of a `--schema` answer that is read.
const SCHEMA_LIMIT: usize = 1024 * 1024;

/// Where tools come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The six tools of this binary (see [`Origin::BuiltIn`]).
    BuiltIn,
    /// The executables of a directory. Whether a missing directory is worth
    /// a word is the caller's business ([`Discovery::unreadable`]).
    Dir(PathBuf),
}

/// The default sources, in order: `$IKIGAI_LIBEXEC_DIR` (or, when it is not
/// set, the built-in tools in its place), `~/.ikigai/tools`,
/// `./.ikigai/tools`.
pub fn default_sources() -> Vec<Source> {
    let mut sources = Vec::new();
    match std::env::var_os("IKIGAI_LIBEXEC_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => sources.push(Source::Dir(dir.into())),
        None => sources.push(Source::BuiltIn),
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        sources.push(Source::Dir(Path::new(&home).join(".ikigai/tools")));
    }
    sources.push(Source::Dir(PathBuf::from("./.ikigai/tools")));
    sources
}

/// Why a tool was not registered.
#[derive(Debug)]
pub enum Rejection {
    /// It could not be run at all.
    NotStarted(io::Error),
    /// No answer to `--schema` within [`SCHEMA_TIMEOUT`].
    TimedOut,
    /// `--schema` exited with a status other than 0.
    Failed(String),
    /// The answer breaks a rule of docs/SPEC.md's schema format.
    Invalid(Violation),
    /// Another file of the same directory already claims the name.
    Duplicate { name: String, first: Origin },
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::NotStarted(e) => write!(f, "cannot be run: {e}"),
            Rejection::TimedOut => {
                write!(f, "did not answer --schema within {}", seconds(SCHEMA_TIMEOUT))
            }
            Rejection::Failed(how) => write!(f, "--schema {how}"),
            Rejection::Invalid(violation) => violation.fmt(f),
            Rejection::Duplicate { name, first } => {
                write!(f, "declares the name {name}, already taken by {}", first.display())
            }
        }
    }
}

/// A tool that was not registered, and why.
#[derive(Debug)]
pub struct Rejected {
    pub origin: Origin,
    pub reason: Rejection,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: rejected: {}", self.origin.display(), self.reason)
    }
}

/// A registered tool that a later source replaced.
#[derive(Debug)]
pub struct Overridden {
    pub name: String,
    pub old: Origin,
    pub new: Origin,
}

impl fmt::Display for Overridden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: overrides {} ({})", self.new.display(), self.old.display(), self.name)
    }
}

/// What a scan found.
#[derive(Debug, Default)]
pub struct Discovery {
    pub registry: Registry,
    /// In the order of the sources, then of the file names.
    pub rejected: Vec<Rejected>,
    pub overridden: Vec<Overridden>,
    /// Directories that could not be listed (a missing one included).
    pub unreadable: Vec<(PathBuf, io::Error)>,
}

/// Scans the sources in order and builds the registry.
pub fn discover(sources: &[Source]) -> Discovery {
    let mut found = Discovery::default();
    // Every file of every directory first, so that all `--schema` calls
    // run at once.
    let mut files: Vec<(usize, PathBuf)> = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        if let Source::Dir(dir) = source {
            match executables(dir) {
                Ok(paths) => files.extend(paths.into_iter().map(|p| (index, p))),
                Err(e) => found.unreadable.push((dir.clone(), e)),
            }
        }
    }
    let jobs =
        files.iter().map(|(_, path)| schema_job(path.clone(), Vec::new(), Input::Null)).collect();
    let mut answers = files.into_iter().zip(process::run_all(jobs)).peekable();

    for (index, source) in sources.iter().enumerate() {
        let mut batch: Vec<(Origin, Result<validate::Schema, Rejection>)> = Vec::new();
        match source {
            Source::BuiltIn => {
                // As Registry::builtin: the profile the tools will run in.
                let profile = crate::profile::Profile::from_env();
                for tool in crate::tools::of(profile) {
                    let schema = validate::validate(tool.schema(profile).as_bytes())
                        .map_err(Rejection::Invalid);
                    batch.push((Origin::BuiltIn(tool), schema));
                }
            }
            Source::Dir(_) => {
                while let Some(((_, path), answer)) = answers.next_if(|((i, _), _)| *i == index) {
                    batch.push((Origin::File(path), accept(answer)));
                }
            }
        }
        add_batch(&mut found, batch);
    }
    found
}

/// Registers one source's tools: duplicates within it are rejected, names
/// already registered by an earlier source are overridden.
fn add_batch(found: &mut Discovery, batch: Vec<(Origin, Result<validate::Schema, Rejection>)>) {
    let mut claimed: Vec<(String, Origin)> = Vec::new();
    for (origin, schema) in batch {
        let schema = match schema {
            Ok(schema) => schema,
            Err(reason) => {
                found.rejected.push(Rejected { origin, reason });
                continue;
            }
        };
        let name = schema.name().to_owned();
        if let Some((_, first)) = claimed.iter().find(|(n, _)| *n == name) {
            let first = first.clone();
            found.rejected.push(Rejected { origin, reason: Rejection::Duplicate { name, first } });
            continue;
        }
        claimed.push((name.clone(), origin.clone()));
        if let Some(old) = found.registry.insert(RegisteredTool { schema, origin: origin.clone() })
        {
            found.overridden.push(Overridden { name, old: old.origin, new: origin });
        }
    }
}

/// Judges one `--schema` run.
fn accept(answer: process::Finished) -> Result<validate::Schema, Rejection> {
    match answer.status {
        Status::NotStarted(e) => Err(Rejection::NotStarted(e)),
        Status::TimedOut => Err(Rejection::TimedOut),
        Status::Signaled(signal) => {
            Err(Rejection::Failed(format!("was killed by signal {signal}")))
        }
        Status::Exited(code) if code != 0 => {
            Err(Rejection::Failed(format!("exited with code {code}")))
        }
        Status::Exited(_) => {
            if answer.stdout.omitted > 0 {
                return Err(Rejection::Failed(format!("printed more than {SCHEMA_LIMIT} bytes")));
            }
            validate::validate(&answer.stdout.bytes).map_err(Rejection::Invalid)
        }
    }
}

/// The `--schema` run of a tool: `program [lead…] --schema`.
pub(crate) fn schema_job(
    program: PathBuf,
    mut args: Vec<std::ffi::OsString>,
    input: Input,
) -> TimedRun {
    args.push("--schema".into());
    TimedRun { program, args, input, timeout: SCHEMA_TIMEOUT, capture_limit: Some(SCHEMA_LIMIT) }
}

/// The executable regular files of a directory (symbolic links followed,
/// names starting with `.` skipped), sorted by name.
pub fn executables(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = dir.join(&name);
        if is_executable_file(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// A regular file (after symbolic links) with an execute bit set.
pub fn is_executable_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `1s`, `0.5s`, `30s`: a duration as messages show it.
pub fn seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_alone() {
        let found = discover(&[Source::BuiltIn]);
        assert_eq!(found.registry.len(), 6);
        assert!(found.rejected.is_empty() && found.overridden.is_empty());
    }

    #[test]
    fn a_missing_directory_is_reported_not_fatal() {
        let found = discover(&[Source::BuiltIn, Source::Dir("/nonexistent/ikigai".into())]);
        assert_eq!(found.registry.len(), 6);
        assert_eq!(found.unreadable.len(), 1);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(30)), "30s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5s");
    }
}
