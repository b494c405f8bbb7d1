//! list_allowed_directories (full profile): the allowed roots in force, so
//! that a model can learn them without being refused first (the reference
//! MCP filesystem server's tool of the same name; docs/CONFINEMENT.md,
//! "What a confined call is told"). Over MCP they are the session's (the
//! server's `--root`, or the client's roots once they came); on the command
//! line those of `IKIGAI_TOOLS_ROOTS`. The answer:
//! `{"output":"/w/proj\n(the allowed roots, from IKIGAI_TOOLS_ROOTS)",
//! "roots":["/w/proj"]}`; unconfined, `roots` is empty and `output` says so.

use crate::confine::Roots;
use crate::context::Context;
use crate::error::ToolError;
use crate::json::size::escaped_len;
use crate::json::Field;
use crate::protocol::{Args, Outcome};

/// The output when no roots are set.
pub const NOT_CONFINED: &str = "not confined: the tools may use any path";

/// What the answer holds beside the roots (the field names, the last
/// line, `(N more)`), with room.
const FIELDS_RESERVE: usize = 256;

/// A call's parameters (list_allowed_directories.full.schema.json: none).
#[derive(Debug)]
pub struct Request;

impl Request {
    pub fn parse(_args: &Args) -> Result<Self, ToolError> {
        Ok(Request)
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let Request = Request::parse(args)?;
    Ok(match context.roots()? {
        Some(roots) => answer(roots, context.answer_limit(FIELDS_RESERVE)),
        None => vec![
            ("output", Field::Text(NOT_CONFINED.as_bytes().to_vec())),
            ("roots", Field::List(Vec::new())),
        ],
    })
}

/// The roots, as many as `budget` holds (each is written twice: a line of
/// `output` and an item of `roots`), the rest counted.
fn answer(roots: &Roots, budget: Option<usize>) -> Vec<(&'static str, Field)> {
    let mut budget = budget.unwrap_or(usize::MAX);
    let mut lines = String::new();
    let mut items = Vec::new();
    let paths: Vec<String> = roots.roots().iter().map(|r| r.path().display().to_string()).collect();
    for path in &paths {
        // A line (and its newline) and an item (its quotes and comma).
        let size = 2 * escaped_len(path.as_bytes()) + 5;
        if size > budget {
            break;
        }
        budget -= size;
        lines.push_str(path);
        lines.push('\n');
        items.push(Field::Text(path.clone().into_bytes()));
    }
    let left_out = paths.len() - items.len();
    if left_out > 0 {
        lines.push_str(&format!("({left_out} more)\n"));
    }
    lines.push_str(&format!("(the allowed roots, {})", roots.source().described()));
    vec![("output", Field::Text(lines.into_bytes())), ("roots", Field::List(items))]
}
