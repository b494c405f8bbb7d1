//! grep: the lines of files that match a regular expression (docs/TOOLS.md
//! grep, docs/SPEC.md).
//!
//! `{"output":"PATH:LINE: TEXT\n…","count":N}`. In the seed profile the
//! files are those glob finds for `glob` (default `*`) under `path`; in the
//! full profile (docs/TOOLS.md, grep, "Full profile") ripgrep's walk and
//! options: ignore files, context, output modes, a page of the entries.
//! Each file is searched as a whole buffer by ripgrep's searcher (bulk line
//! counting, NUL = binary, skipped); files are searched in parallel and
//! their results stitched back in order.
//!
//! As ripgrep splits its core from its printer, the parts are apart, the
//! same for both profiles but for the walk:
//!
//! - `request`: what the call asks, every parameter read once;
//! - `files`: what is searched: the file `path` names, or the walk (the
//!   profile's), beneath the allowed roots when there are any;
//! - `search`: how: the matcher, the searcher, the threads (`ordered`);
//! - `print`: how the entries are printed into the answer, within the
//!   output limit and in bounded memory.

use crate::context::Context;
use crate::fs::looked_up;
use crate::protocol::{Args, Outcome};

mod files;
mod ordered;
mod print;
mod regex_error;
mod request;
mod search;

use files::{Files, Walk};
use print::Printer;
use request::Request;

pub fn run(args: &Args, context: &Context) -> Outcome {
    let full = context.profile.is_full();
    // The seed profile's call is the full request with its defaults: the
    // name rule (`tools::params`) has refused any full-profile parameter.
    let request = Request::parse(args)?;
    // Both patterns are checked before any file is read.
    let matcher = search::matcher(&request)?;
    let walk = if full { Walk::ignoring(&request)? } else { Walk::glob(&request)? };
    let roots = context.roots()?;
    // A `path` not found or refused says what was looked up.
    let explained = |e| looked_up::explain(e, request.path.unwrap_or_default(), roots);
    let files = Files::new(walk, &request, roots).map_err(explained)?;
    let printer = Printer::new(&request, context.answer_limit(0), full);
    let walked = search::search(files, &matcher, &request, &printer).map_err(explained)?;
    // The seed profile's answer loses the full profile's fields in one
    // place, `Tool::call` (`full_fields`).
    let mut answer = printer.answer(walked.skipped);
    answer.extend(walked.ignore_files.field(&answer, context.answer_limit(0)));
    Ok(answer)
}
