//! file_edit: replaces exact text in a file (docs/TOOLS.md).
//!
//! - Exact byte matching over the whole file, NUL bytes included;
//!   occurrences counted left to right without overlap (memmem).
//! - Checks in this order: empty `old_string`, identical strings, the file,
//!   then the count (0 → NOT_FOUND unless `replace_all`, more than one
//!   without `replace_all` → NOT_UNIQUE).
//! - A file with CRLF line endings: an `old_string` with `\n` line breaks
//!   that matches nothing is tried again with them read as `\r\n`, and
//!   `new_string` converted alike.
//! - A change of a file is serialised with every other change of it, by
//!   edit or write: an exclusive lock (`fs::lock`) is held across read,
//!   replace and write, so none is lost.
//! - The file is written through `fs::atomic_write`, once.
//! - The full profile (docs/TOOLS.md, "file_edit", "Full profile"): several
//!   edits at once (`edits`, at most `edits::MAX_EDITS`), all or nothing; a
//!   refusal of a file changed since it was read (`expected_sha256`);
//!   `dry_run`; an answer with the diff and the new content's sha256, and
//!   hints in errors.
//!
//! One path for both profiles up to the content: the request read once
//! (`Request`), the file opened, the edits' work for its size bounded
//! (`edits::check_work`), the target resolved, the lock taken; under the
//! lock the content read and its sha256 compared. There the answers part:
//! the seed's (no diff, no hints) is one replacement counted and written
//! streamed (`Replaced`): memory is the file, once, even for a million
//! one-byte replacements, and a file too large for memory is
//! `OUT_OF_MEMORY`, never an abort. The full profile's edits are applied in
//! memory (`edits::apply`), for the diff, then written.

use memchr::memmem;
use serde_json::Value;

use crate::confine::Roots;
use crate::context::Context;
use crate::error::ToolError;
use crate::fs::atomic_write::{self, Content};
use crate::fs::digest::sha256_hex;
use crate::fs::open::open_regular;
use crate::fs::target::Target;
use crate::fs::{basename, lock, looked_up, read};
use crate::json::Field;
use crate::protocol::{Answer, Args, Outcome};
use crate::tools::diff;
use edits::Edit;

pub(super) mod edits;
mod hints;

/// A call's arguments, every parameter of the full schema read and
/// type-checked once, in the order of its messages; the seed's call is the
/// same with one edit, of `old_string` and `new_string` (the
/// parameter-name rule refused the others).
pub struct Request<'a> {
    pub file_path: &'a str,
    /// The replacements, in order: `edits`, or the one of `old_string` and
    /// `new_string` (its `index` None), each checked as the seed checks
    /// its one.
    pub edits: Vec<Edit<'a>>,
    /// The version the file must be at: 64 lowercase hex digits.
    pub expected_sha256: Option<String>,
    pub dry_run: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Request<'a>, ToolError> {
        Ok(Request {
            file_path: args.required_path("file_path")?,
            edits: requested(args)?,
            expected_sha256: expected_sha256(args)?,
            dry_run: args.optional_bool("dry_run")?.unwrap_or(false),
        })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let roots = context.roots()?;
    // A path not found or refused says what was looked up.
    edit(&request, roots, context).map_err(|e| looked_up::explain(e, request.file_path, roots))
}

fn edit(request: &Request, roots: Option<&Roots>, context: &Context) -> Outcome {
    let path = request.file_path;
    // The file read (its errors first, as docs/SPEC.md has them), then where
    // the edit will be written: both beneath the roots if any.
    let opened = open_regular(path, roots)?;
    // The work the edits take, bounded before anything else is done: by
    // the size the file says, and again by what was read (it may have grown).
    let size = opened.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    edits::check_work(request.edits.len(), size, path)?;
    let target = Target::for_write(path, roots)?;
    // Held until the edited file is in place: the content compared with
    // `expected_sha256` is the content edited and replaced.
    let file = lock::for_edit(path, &target, opened, context.lock_wait)?;
    let content = read::read_all(&file, path)?;
    edits::check_work(request.edits.len(), content.len() as u64, path)?;
    if let Some(expected) = &request.expected_sha256 {
        if sha256_hex(&content) != *expected {
            return Err(ToolError::Stale(path.to_owned()));
        }
    }
    let answer = match (&request.edits[..], context.profile.is_full()) {
        ([edit], false) => replace_streamed(edit, &content, &target, path)?,
        (edits, _) => apply_in_memory(edits, &content, &target, request, context)?,
    };
    drop(file);
    Ok(answer)
}

/// The seed's answer: `edit`'s replacements counted, then written straight
/// from `content` (`Replaced`); its errors without the full profile's hints.
fn replace_streamed(
    edit: &Edit,
    content: &[u8],
    target: &Target,
    path: &str,
) -> Result<Answer, ToolError> {
    let (old, new) = (edit.old.as_bytes(), edit.new.as_bytes());
    let mut count = memmem::find_iter(content, old).count();
    let crlf;
    let (old, new) =
        if count == 0 && old.contains(&b'\n') && memmem::find(content, b"\r\n").is_some() {
            crlf = (to_crlf(old), to_crlf(new));
            count = memmem::find_iter(content, &crlf.0).count();
            (&crlf.0[..], &crlf.1[..])
        } else {
            (old, new)
        };
    if count == 0 && !edit.replace_all {
        return Err(ToolError::NotFound);
    }
    if count > 1 && !edit.replace_all {
        return Err(ToolError::NotUnique(count));
    }
    if count > 0 {
        atomic_write::write(target, path, &Replaced { content, old, new, count })?;
    }
    Ok(replaced_fields(path, count))
}

/// The full profile's answer: every edit applied in memory, in order, and
/// only then the one write (none for a dry run).
fn apply_in_memory(
    edits: &[Edit],
    content: &[u8],
    target: &Target,
    request: &Request,
    context: &Context,
) -> Result<Answer, ToolError> {
    let path = request.file_path;
    let applied = edits::apply(content, edits)?;
    // The answer's parts first: the write, the one step that changes
    // anything, comes last.
    let diff = diff::unified(content, &applied.content, &applied.pieces, path);
    let sha256 = sha256_hex(&applied.content);
    let changed = applied.content[..] != content[..];
    if changed && request.dry_run {
        // What the real write would check first: the file may be written.
        target.check_writable().map_err(|e| ToolError::from_io(&e, path, ToolError::OpenFailed))?;
    } else if changed {
        atomic_write::write(target, path, &applied.content[..])?;
    }
    Ok(answer(path, applied.count, &diff, sha256, context.answer_limit(0)))
}

/// The seed's fields: what was done, and how many replacements.
fn replaced_fields(path: &str, count: usize) -> Answer {
    let plural = if count == 1 { "" } else { "s" };
    let output = format!("Replaced {count} occurrence{plural} in {}", basename(path));
    vec![
        ("output", Field::Text(output.into_bytes())),
        ("replacements", Field::Int(i64::try_from(count).unwrap_or(i64::MAX))),
    ]
}

/// The seed's fields, then `diff` (within what the output limit leaves
/// it) and `sha256`.
fn answer(path: &str, count: usize, diff: &[u8], sha256: String, limit: Option<usize>) -> Answer {
    let mut fields = replaced_fields(path, count);
    fields.push(("diff", Field::Text(Vec::new())));
    fields.push(("sha256", Field::Text(sha256.into_bytes())));
    diff::fill_bounded(&mut fields, 2, diff, limit);
    fields
}

/// The edits asked for: `edits`, or the one of `old_string` and
/// `new_string`, each checked as the seed checks its one.
fn requested(args: &Args) -> Result<Vec<Edit<'_>>, ToolError> {
    let Some(items) = args.optional_array("edits")? else {
        let old = args.required_str("old_string")?;
        let new = args.required_str("new_string")?;
        let replace_all = args.optional_bool("replace_all")?.unwrap_or(false);
        check(old, new, "old_string", "new_string")?;
        return Ok(vec![Edit { old, new, replace_all, index: None }]);
    };
    if ["old_string", "new_string", "replace_all"].iter().any(|name| args.has(name)) {
        return Err(ToolError::InvalidArg(
            "give either edits or old_string/new_string, not both: one replacement is \
             old_string and new_string (with replace_all), several are edits, each with its own \
             replace_all"
                .to_owned(),
        ));
    }
    if items.is_empty() {
        return Err(ToolError::InvalidArg("parameter edits must not be empty".to_owned()));
    }
    if items.len() > edits::MAX_EDITS {
        return Err(ToolError::InvalidArg(format!(
            "parameter edits holds {} edits, at most {} are taken in one call; {}",
            items.len(),
            edits::MAX_EDITS,
            edits::TO_DO
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Object(map) = item else {
                return Err(ToolError::InvalidArg(format!(
                    "edits[{i}] must be an object with old_string and new_string"
                )));
            };
            let field = |name: &str| map.get(name).filter(|v| !v.is_null());
            let text = |name: &str| match field(name) {
                None => Err(ToolError::InvalidArg(format!(
                    "missing required parameter: edits[{i}].{name}"
                ))),
                Some(Value::String(s)) => Ok(s.as_str()),
                Some(_) => Err(ToolError::InvalidArg(format!(
                    "parameter edits[{i}].{name} must be a string"
                ))),
            };
            let (old, new) = (text("old_string")?, text("new_string")?);
            let replace_all = match field("replace_all") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(ToolError::InvalidArg(format!(
                        "parameter edits[{i}].replace_all must be a boolean"
                    )))
                }
            };
            check(old, new, &format!("edits[{i}].old_string"), &format!("edits[{i}].new_string"))?;
            Ok(Edit { old, new, replace_all, index: Some(i) })
        })
        .collect()
}

/// The seed's checks of one edit, its parameters named as given.
fn check(old: &str, new: &str, old_name: &str, new_name: &str) -> Result<(), ToolError> {
    if old.is_empty() {
        return Err(ToolError::InvalidArg(format!("{old_name} cannot be empty")));
    }
    if old == new {
        return Err(ToolError::InvalidArg(format!("{old_name} and {new_name} are identical")));
    }
    Ok(())
}

/// `expected_sha256`, as 64 lowercase hex digits (upper case taken too).
fn expected_sha256(args: &Args) -> Result<Option<String>, ToolError> {
    let Some(text) = args.optional_str("expected_sha256")? else {
        return Ok(None);
    };
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ToolError::InvalidArg(
            "parameter expected_sha256 must be a sha256: 64 hexadecimal digits, as file_read \
             answers it"
                .to_owned(),
        ));
    }
    Ok(Some(text.to_ascii_lowercase()))
}

/// `\n` line breaks as `\r\n` (those already preceded by `\r` stay).
fn to_crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    let mut prev = 0u8;
    for &b in text {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

/// `content` with its `count` non-overlapping occurrences of `old`
/// replaced by `new`, found again as it is written: the stretches between
/// them go to the file straight from `content`.
struct Replaced<'a> {
    content: &'a [u8],
    old: &'a [u8],
    new: &'a [u8],
    count: usize,
}

impl Content for Replaced<'_> {
    fn size(&self) -> usize {
        // No overflow: the result is at most the old content plus `count`
        // copies of `new`, each under the argument's size.
        (self.content.len() - self.count * self.old.len())
            .saturating_add(self.count * self.new.len())
    }

    fn each_piece(
        &self,
        sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut last = 0;
        for pos in memmem::find_iter(self.content, self.old) {
            sink(&self.content[last..pos])?;
            sink(self.new)?;
            last = pos + self.old.len();
        }
        sink(&self.content[last..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_conversion_leaves_existing_crlf_alone() {
        assert_eq!(to_crlf(b"a\nb\r\nc\n"), b"a\r\nb\r\nc\r\n");
        assert_eq!(to_crlf(b"\n\n"), b"\r\n\r\n");
    }

    fn replaced(content: &[u8], old: &[u8], new: &[u8], count: usize) -> Vec<u8> {
        let replaced = Replaced { content, old, new, count };
        let mut out = Vec::new();
        replaced
            .each_piece(&mut |piece| {
                out.extend_from_slice(piece);
                Ok(())
            })
            .unwrap();
        assert_eq!(out.len(), replaced.size());
        out
    }

    #[test]
    fn replacement_is_left_to_right_without_overlap() {
        assert_eq!(replaced(b"aaaaa", b"aa", b"b", 2), b"bba");
        assert_eq!(replaced(b"x\0y\0", b"\0", b"", 2), b"xy");
        assert_eq!(replaced(b"abc", b"b", b"BBB", 1), b"aBBBc");
    }
}
