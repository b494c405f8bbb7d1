//! grep: the lines of files that match a regular expression (docs/TOOLS.md
//! grep, docs/SPEC.md).
//!
//! `{"output":"PATH:LINE: TEXT\n…","count":N}`. The files are those glob
//! finds for `glob` (default `*`) under `path`, regular files only, in glob
//! order. Each file is searched as a whole buffer by ripgrep's searcher
//! (bulk line counting, NUL = binary, skipped); files are searched in
//! parallel and their results stitched back in order.
//!
//! As ripgrep splits its core from its printer, the parts are apart:
//!
//! - `files`: what is searched: the walk, or the file `path` names, beneath
//!   the allowed roots when there are any;
//! - `search`: how: the matcher, the searcher, the threads (`ordered`);
//! - `print`: how the lines are printed into the answer, within the output
//!   limit and in bounded memory.

use crate::context::Context;
use crate::fs::pattern::Glob;
use crate::json::Field;
use crate::protocol::{Args, Outcome};

mod files;
mod full;
mod ordered;
mod print;
mod search;

use files::Files;
use print::Answer;

pub fn run(args: &Args, context: &Context) -> Outcome {
    if context.profile.is_full() {
        return full::run(args, context);
    }
    let pattern = args.required_str("pattern")?;
    let filter = match args.optional_str("glob")? {
        None | Some("") => None,
        Some(filter) => Some(filter),
    };
    let path = args.optional_path("path")?;
    // Both patterns are checked before any file is read.
    let matcher = search::matcher(pattern)?;
    let glob = Glob::new(path, filter.unwrap_or("*"))?;
    let roots = context.roots()?;
    let files = Files::new(glob, path, filter, roots)?;
    let answer = Answer::new(context.max_output);
    let count = search::search(files, &matcher, &answer)?;
    Ok(vec![("output", Field::Parts(answer.finish())), ("count", Field::Int(count))])
}
