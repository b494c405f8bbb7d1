//! file_write: creates or overwrites a file with `content` (docs/TOOLS.md).
//! The writing itself, crash-safe and keeping mode, owner, attributes and
//! links, is `fs::atomic_write`'s (on the directory and name `fs::target`
//! resolves, beneath the allowed roots if any: docs/CONFINEMENT.md); the lock that serialises it
//! with edits and other writes
//! of the file is `fs::lock`'s. This file is the tool's
//! arguments and answer.
//!
//! The full profile adds `expected_sha256`, the version the file must be
//! at (compared under the lock, so that no other change of ours can come
//! between the look and the write), `create_dirs` (`fs::make_dirs`), and
//! the `sha256` of what was written to the answer.

use std::fs::File;

use crate::context::Context;
use crate::error::{Kind, ToolError, Why};
use crate::fs::digest::{sha256_hex, sha256_of_file};
use crate::fs::lock::Locked;
use crate::fs::target::Target;
use crate::fs::{atomic_write, basename, lock, looked_up, make_dirs, read};
use crate::json::Field;
use crate::protocol::{Args, Outcome};

/// A call's arguments, every parameter of the full schema read and
/// type-checked once, in the order of its messages; the seed's call is the
/// same with neither `expected_sha256` nor `create_dirs` (the
/// parameter-name rule refused them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub file_path: &'a str,
    pub content: &'a str,
    /// The version the file must be at: `""` (it must not exist) or 64
    /// lowercase hex digits.
    pub expected_sha256: Option<String>,
    pub create_dirs: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Request<'a>, ToolError> {
        Ok(Request {
            file_path: args.required_path("file_path")?,
            content: args.required_str("content")?,
            expected_sha256: args
                .optional_str("expected_sha256")?
                .map(expected_version)
                .transpose()?,
            create_dirs: args.optional_bool("create_dirs")?.unwrap_or(false),
        })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let path = request.file_path;
    let roots = context.roots()?;
    // A path not found or refused says what was looked up.
    write(request, context).map_err(|e| looked_up::explain(e, path, roots))
}

fn write(request: Request, context: &Context) -> Outcome {
    let Request { file_path: path, content, expected_sha256: expected, create_dirs } = request;
    if create_dirs {
        make_dirs::parents(path, context.roots()?)?;
    }
    // The directory and name written, beneath the roots if any.
    let target = Target::for_write(path, context.roots()?)?;
    // Held until the new content is in place.
    let lock = lock::for_write(path, &target, context.lock_wait)?;
    match expected.as_deref() {
        None => atomic_write::write(&target, path, content.as_bytes())?,
        // Must not exist: created by a rename that replaces nothing.
        Some("") => atomic_write::create(&target, path, content.as_bytes())?,
        Some(version) => {
            check_version(version, &target, lock.as_ref(), path)?;
            atomic_write::write(&target, path, content.as_bytes())?;
        }
    }
    drop(lock);
    let bytes = content.len();
    let output = format!("Wrote {bytes} bytes to {}", basename(path));
    // The seed does not show `sha256` (`Tool::full_fields`), nor pay for it.
    let mut answer =
        vec![("output", Field::Text(output.into_bytes())), ("bytes", Field::Int(bytes as i64))];
    if context.profile.is_full() {
        answer.push(("sha256", Field::Text(sha256_hex(content.as_bytes()).into_bytes())));
    }
    Ok(answer)
}

/// `expected_sha256` as compared: `""`, or 64 hex digits (in lowercase).
fn expected_version(given: &str) -> Result<String, ToolError> {
    let hex = given.len() == 64 && given.bytes().all(|b| b.is_ascii_hexdigit());
    if given.is_empty() || hex {
        Ok(given.to_ascii_lowercase())
    } else {
        Err(ToolError::InvalidArg(
            "parameter expected_sha256 must be the 64 hex digits of a sha256 (as file_read \
             answers it), or \"\" for a file that must not exist"
                .to_owned(),
        ))
    }
}

/// Whether the file is at `version` (its sha256), read through the file
/// the lock holds: the file that will be replaced. `STALE` if not, or if
/// it is gone.
fn check_version(
    version: &str,
    target: &Target,
    locked: Option<&Locked>,
    path: &str,
) -> Result<(), ToolError> {
    let Some(file) = locked else {
        // Nothing to lock: no file, a file we may not read, or not a
        // regular file (which has no version).
        return Err(match target.stat() {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => ToolError::Stale(path.to_owned()),
            Err(e) => ToolError::from_io(&e, path, ToolError::OpenFailed),
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFREG => {
                ToolError::PermissionDenied(path.to_owned())
            }
            Ok(st) => {
                ToolError::OpenFailed(path.to_owned()).because(Why::Kind(Kind::of_mode(st.st_mode)))
            }
        });
    };
    if sha256_of(file, path)? == version {
        Ok(())
    } else {
        Err(ToolError::Stale(path.to_owned()))
    }
}

/// The sha256 of the locked file. One that reports no size is read as
/// file_edit reads it, at most 64 MiB (`fs::read`).
fn sha256_of(file: &File, path: &str) -> Result<String, ToolError> {
    let size = file.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    let sha256 = match size {
        0 => Ok(sha256_hex(&read::read_all(file, path)?)),
        _ => sha256_of_file(file),
    };
    sha256.map_err(|e| match e.raw_os_error() {
        // Opened for writing only, to be locked: we may not read it.
        Some(libc::EBADF) => ToolError::PermissionDenied(path.to_owned()),
        _ => ToolError::from_io(&e, path, ToolError::ReadFailed),
    })
}
