//! glob in the full profile (docs/TOOLS.md, glob, "Full profile"): the
//! seed's patterns over the ignore-aware walk (`fs::walk::matched`), hidden
//! and ignored files left out unless asked (`fd --glob`), sorted by path or
//! by modification time, at most `head_limit` paths; the ignore files
//! skipped as over a bound are named (`ignore_files_skipped`).

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{statat, AtFlags};

use crate::context::Context;
use crate::error::ToolError;
use crate::fs::pattern::Glob;
use crate::fs::walk::ignore_files::IgnoreFiles;
use crate::fs::walk::ignored::{Met, Rules};
use crate::fs::walk::matched::glob_ignoring;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::protocol::{Args, Outcome};

pub(super) fn run(args: &Args, context: &Context) -> Outcome {
    let pattern = args.required_str("pattern")?;
    let path = args.optional_path("path")?;
    let by_mtime = match args.optional_str("sort")? {
        None | Some("path") => false,
        Some("mtime") => true,
        Some(other) => {
            return Err(ToolError::InvalidArg(format!(
                "parameter sort must be path or mtime, not {other:?}"
            )))
        }
    };
    let head_limit = match args.optional_int("head_limit")? {
        Some(n) if n < 0 => {
            return Err(ToolError::InvalidArg(format!(
                "parameter head_limit must not be negative, got {n}"
            )))
        }
        n => n.unwrap_or(0) as u64,
    };
    let rules = Rules {
        hidden: args.optional_bool("hidden")?.unwrap_or(false),
        no_ignore: args.optional_bool("no_ignore")?.unwrap_or(false),
        overrides: None,
    };
    let glob = Glob::new(path, pattern)?;
    let roots = context.roots()?;
    // (modification time, path): newest first, then by path.
    let mut all: Vec<((i64, i64), Vec<u8>)> = Vec::new();
    let mut ignore_files = IgnoreFiles::new();
    glob_ignoring(&glob, roots, &rules, &mut ignore_files, &mut |shown: &[u8], met: &Met<'_>| {
        let mtime = if by_mtime { mtime(met) } else { (0, 0) };
        all.push((mtime, shown.to_vec()));
    })?;
    if by_mtime {
        all.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    } else {
        all.sort_unstable_by(|a, b| a.1.cmp(&b.1));
    }
    // Alternatives of one pattern may find a path twice.
    all.dedup_by(|a, b| a.1 == b.1);
    let count = all.len() as u64;
    let keep = if head_limit == 0 { count } else { count.min(head_limit) };
    let mut output = Bounded::for_answer(context.max_output);
    for (_, path) in all.iter().take(keep as usize) {
        output.push(path);
        output.push(b"\n");
    }
    let mut output = output.finish_parts();
    limit::strip_final_newline(&mut output);
    let mut answer = vec![
        ("output", Field::Parts(output)),
        ("count", Field::Int(i64::try_from(count).unwrap_or(i64::MAX))),
    ];
    if keep < count {
        answer.push(("truncated", Field::Bool(true)));
    }
    answer.extend(ignore_files.field(&answer, context.max_output));
    Ok(answer)
}

/// The entry's modification time (seconds, nanoseconds), as it is (a link
/// is not followed); the epoch when it cannot be told.
fn mtime(met: &Met<'_>) -> (i64, i64) {
    let name = OsStr::from_bytes(met.name());
    match statat(met.dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok(stat) => (stat.st_mtime as i64, stat.st_mtime_nsec as i64),
        Err(_) => (0, 0),
    }
}
