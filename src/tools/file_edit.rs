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
//! - Memory: the file, once. The new content is never built: the unchanged
//!   stretches are written straight from the old content (`Replaced`), so
//!   even a million one-byte replacements cost no memory of their own. A
//!   file too large for memory is `OUT_OF_MEMORY`, never an abort.
//! - The file is written through `fs::atomic_write`.
//! - The full profile (`full`): several edits, `expected_sha256`,
//!   `dry_run`, a diff and the new sha256 in the answer, hints in errors.

use memchr::memmem;

use crate::context::Context;
use crate::error::ToolError;
use crate::fs::atomic_write::{self, Content};
use crate::fs::open::open_regular;
use crate::fs::target::Target;
use crate::fs::{basename, lock, read};
use crate::json::Field;
use crate::protocol::{Args, Outcome};

mod diff;
mod edits;
mod full;
mod hints;

pub fn run(args: &Args, context: &Context) -> Outcome {
    if context.profile.is_full() {
        return full::run(args, context);
    }
    let path = args.required_path("file_path")?;
    let old = args.required_str("old_string")?;
    let new = args.required_str("new_string")?;
    let replace_all = args.optional_bool("replace_all")?.unwrap_or(false);
    if old.is_empty() {
        return Err(ToolError::InvalidArg("old_string cannot be empty".to_owned()));
    }
    if old == new {
        return Err(ToolError::InvalidArg("old_string and new_string are identical".to_owned()));
    }
    let roots = context.roots()?;
    // The file read (its errors first, as docs/SPEC.md has them), then where
    // the edit will be written: both beneath the roots if any.
    let opened = open_regular(path, roots)?;
    let target = Target::for_write(path, roots)?;
    // Held until the edited file is in place; dropping it releases the lock.
    let file = lock::for_edit(path, &target, opened, context.lock_wait)?;
    let content = read::read_all(&file, path)?;
    let (old, new) = (old.as_bytes(), new.as_bytes());
    let mut count = memmem::find_iter(&content, old).count();
    let crlf;
    let (old, new) =
        if count == 0 && old.contains(&b'\n') && memmem::find(&content, b"\r\n").is_some() {
            crlf = (to_crlf(old), to_crlf(new));
            count = memmem::find_iter(&content, &crlf.0).count();
            (&crlf.0[..], &crlf.1[..])
        } else {
            (old, new)
        };
    if count == 0 && !replace_all {
        return Err(ToolError::NotFound);
    }
    if count > 1 && !replace_all {
        return Err(ToolError::NotUnique(count));
    }
    if count > 0 {
        atomic_write::write(&target, path, &Replaced { content: &content, old, new, count })?;
    }
    drop(file);
    let plural = if count == 1 { "" } else { "s" };
    let output = format!("Replaced {count} occurrence{plural} in {}", basename(path));
    Ok(vec![
        ("output", Field::Text(output.into_bytes())),
        ("replacements", Field::Int(i64::try_from(count).unwrap_or(i64::MAX))),
    ])
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
