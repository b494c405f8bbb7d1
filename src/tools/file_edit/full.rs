//! file_edit in the full profile (docs/TOOLS.md, "file_edit", "Full
//! profile"): several edits at once (`edits`), all or nothing; a refusal
//! of a file changed since it was read (`expected_sha256`); `dry_run`; and
//! an answer with the diff and the new content's sha256.
//!
//! The same steps as the seed's, in the same order: the arguments (at most
//! `edits::MAX_EDITS` edits), the file opened, the edits' work for its size
//! bounded (`edits::check_work`), the target resolved, the lock taken; then, under the lock,
//! the content read, its sha256 compared, every edit applied in memory, and
//! only then the one crash-safe write (`fs::atomic_write`).

use crate::context::Context;
use crate::error::ToolError;
use crate::fs::atomic_write;
use crate::fs::digest::sha256_hex;
use crate::fs::open::open_regular;
use crate::fs::target::Target;
use crate::fs::{basename, lock, read};
use crate::json::{self, Field};
use crate::limit::Bounded;
use crate::protocol::{Args, Outcome};

use serde_json::Value;

use super::diff;
use super::edits::{self, Edit};

pub fn run(args: &Args, context: &Context) -> Outcome {
    let path = args.required_path("file_path")?;
    let edits = requested(args)?;
    let expected = expected_sha256(args)?;
    let dry_run = args.optional_bool("dry_run")?.unwrap_or(false);
    let roots = context.roots()?;
    let opened = open_regular(path, roots)?;
    // The work the edits take, bounded before anything else is done: by
    // the size the file says, and again by what was read (it may have grown).
    let size = opened.metadata().map_err(|_| ToolError::SizeFailed(path.to_owned()))?.len();
    edits::check_work(edits.len(), size, path)?;
    let target = Target::for_write(path, roots)?;
    // Held until the edited file is in place: the content compared with
    // `expected_sha256` is the content edited and replaced.
    let file = lock::for_edit(path, &target, opened, context.lock_wait)?;
    let content = read::read_all(&file, path)?;
    edits::check_work(edits.len(), content.len() as u64, path)?;
    if let Some(expected) = expected {
        if sha256_hex(&content) != expected {
            return Err(ToolError::Stale(path.to_owned()));
        }
    }
    let applied = edits::apply(&content, &edits)?;
    // The answer's parts first: the write, the one step that changes
    // anything, comes last.
    let diff = diff::unified(&content, &applied.content, &applied.pieces, path);
    let sha256 = sha256_hex(&applied.content);
    let changed = applied.content[..] != content[..];
    if changed && dry_run {
        // What the real write would check first: the file may be written.
        target.check_writable().map_err(|e| ToolError::from_io(&e, path, ToolError::OpenFailed))?;
    } else if changed {
        atomic_write::write(&target, path, &applied.content[..])?;
    }
    drop(file);
    Ok(answer(path, applied.count, &diff, sha256, context.max_output))
}

/// The seed's fields, then `diff` (within what the output limit leaves
/// it) and `sha256`.
fn answer(
    path: &str,
    count: usize,
    diff: &[u8],
    sha256: String,
    limit: Option<usize>,
) -> Vec<(&'static str, Field)> {
    let plural = if count == 1 { "" } else { "s" };
    let output = format!("Replaced {count} occurrence{plural} in {}", basename(path));
    let mut fields = vec![
        ("output", Field::Text(output.into_bytes())),
        ("replacements", Field::Int(i64::try_from(count).unwrap_or(i64::MAX))),
        ("diff", Field::Text(Vec::new())),
        ("sha256", Field::Text(sha256.into_bytes())),
    ];
    let mut others = Vec::new();
    let others = match json::write_object(&mut others, &fields) {
        Ok(()) => others.len(),
        Err(_) => 0,
    };
    let mut bounded = Bounded::for_answer(limit.map(|l| l.saturating_sub(others)));
    bounded.push(diff);
    fields[2].1 = Field::Parts(bounded.finish_parts());
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
