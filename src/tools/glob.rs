//! glob: the paths that match a pattern (docs/TOOLS.md, glob, docs/SPEC.md).
//!
//! `{"output":"a\nb","count":2}`: one path a line, sorted by bytes, printed
//! as `path/pattern` spells them. The matching and walking live in
//! `fs::pattern` and `fs::walk`, shared with grep. With allowed roots
//! (docs/CONFINEMENT.md) the walk stays beneath them (`walk_confined`).

use crate::context::Context;
use crate::fs::pattern::Glob;
use crate::fs::walk::walk_within;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::protocol::{Args, Outcome};

mod full;

pub fn run(args: &Args, context: &Context) -> Outcome {
    if context.profile.is_full() {
        return full::run(args, context);
    }
    let pattern = args.required_str("pattern")?;
    let path = args.optional_path("path")?;
    let glob = Glob::new(path, pattern)?;
    let roots = context.roots()?;
    let mut output = Bounded::for_answer(context.max_output);
    let mut count: i64 = 0;
    let visit = |found: crate::fs::walk::Found<'_>| {
        output.push(found.path);
        output.push(b"\n");
        count += 1;
    };
    walk_within(&glob, roots, visit)?;
    let mut output = output.finish_parts();
    // Each path ends with a newline; the last one does not need it.
    limit::strip_final_newline(&mut output);
    Ok(vec![("output", Field::Parts(output)), ("count", Field::Int(count))])
}
