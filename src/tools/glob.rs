//! glob: the paths that match a pattern (CONTRACT §4 glob, seed 000).
//!
//! `{"output":"a\nb","count":2}`: one path a line, sorted by bytes, printed
//! as `path/pattern` spells them. The matching and walking live in
//! `fs::pattern` and `fs::walk`, shared with grep.

use crate::fs::pattern::Glob;
use crate::fs::walk::walk;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::protocol::{Args, Outcome};

pub fn run(args: &Args) -> Outcome {
    let pattern = args.required_str("pattern")?;
    let path = args.optional_path("path")?;
    let glob = Glob::new(path, pattern)?;
    let mut output = Bounded::from_env();
    let mut count: i64 = 0;
    walk(&glob, |found| {
        output.push(found.path);
        output.push(b"\n");
        count += 1;
    });
    let mut output = output.finish_parts();
    // Each path ends with a newline; the last one does not need it.
    limit::strip_final_newline(&mut output);
    Ok(vec![("output", Field::Parts(output)), ("count", Field::Int(count))])
}
