//! apply_patch (full profile): OpenAI's patch format, parsed, located and
//! applied, all or nothing (docs/TOOLS.md, "apply_patch").
//!
//! The pure part (no I/O): `parse` (the grammar and its leniency), `seek`
//! (the context-matching ladder), `hunks` (a file's chunks applied to its
//! text, failures saying where), `text` (line endings and BOM). The tool:
//! `request` (the arguments), `paths` (a patch's path beneath `workdir`),
//! `files` (every file the patch names read and locked, the operations
//! applied in memory in order), `commit` (every new content prepared, then
//! all put in place, undone on failure), `answer` (Codex's list and the
//! diff), `align` (what the diff shows as unchanged).
//!
//! Nothing is written until the whole patch is parsed, every file read
//! and every hunk located: a failure there changes nothing. Every error
//! says "nothing was changed" (or, should an undo itself fail, which files
//! were left changed).

use crate::context::Context;
use crate::error::ToolError;
use crate::protocol::{Args, Outcome};

mod align;
mod answer;
mod commit;
mod files;
pub(crate) mod hunks;
pub(crate) mod parse;
mod paths;
mod request;
pub(crate) mod seek;
pub(crate) mod text;

use request::Request;

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let roots = context.roots()?;
    let patch =
        parse::parse(request.input).map_err(|e| unchanged(ToolError::InvalidArg(e.to_string())))?;
    let mut files = files::Files::new(request.workdir, roots, context.lock_wait);
    let changes = files.apply(&patch).map_err(unchanged)?;
    let diff = files.diff();
    if !request.dry_run {
        commit::commit(&files, roots).map_err(|failed| match failed {
            commit::Failed::Undone(e) => unchanged(e),
            commit::Failed::Partly(e) => e,
        })?;
    }
    Ok(answer::answer(&changes, &diff, request.dry_run, context.answer_limit(0)))
}

/// `err` told with "nothing was changed" after its message: every failure
/// before or during the commit leaves every file as it was.
fn unchanged(err: ToolError) -> ToolError {
    err.detailed(Some(NOTHING_CHANGED.to_owned()), Vec::new())
}

const NOTHING_CHANGED: &str = "nothing was changed";
