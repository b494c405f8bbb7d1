//! glob: the paths that match a pattern (docs/TOOLS.md, glob, docs/SPEC.md).
//!
//! `{"output":"a\nb","count":2}`: one path a line, sorted by bytes, printed
//! as `path/pattern` spell them. The matching and walking live in
//! `fs::pattern` and `fs::walk`, shared with grep. With allowed roots
//! (docs/CONFINEMENT.md) the walk stays beneath them (`walk_confined`).
//!
//! The profiles' walks mean different things, so they are two: the seed
//! lists every path that matches, hidden and ignored ones included,
//! streamed as the walk meets them (`every_path`); the full profile
//! (docs/TOOLS.md, glob, "Full profile") walks ignore-aware
//! (`fs::walk::matched`), hidden and ignored files left out unless asked
//! (`fd --glob`), sorted by path or by modification time, at most
//! `head_limit` paths, and names the ignore files skipped as over a bound
//! (`ignore_files_skipped`); a `path` that does not exist is
//! `FILE_NOT_FOUND`, as in full grep.

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{statat, AtFlags};

use crate::confine::{ConfineError, Roots};
use crate::context::Context;
use crate::error::ToolError;
use crate::fs::looked_up;
use crate::fs::pattern::Glob;
use crate::fs::walk::ignore_files::IgnoreFiles;
use crate::fs::walk::ignored::{Met, Rules};
use crate::fs::walk::matched::glob_ignoring;
use crate::fs::walk::walk_within;
use crate::json::Field;
use crate::limit::{self, marker, Bounded};
use crate::protocol::{Args, Outcome};

/// A call's arguments, every parameter of the full schema read and
/// type-checked once, in the order of its messages; the seed's call has
/// only `pattern` and `path` (the parameter-name rule refused the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub pattern: &'a str,
    /// `None` for the current directory (an empty `path` too).
    pub path: Option<&'a str>,
    /// `sort` is `mtime`: newest first.
    pub by_mtime: bool,
    /// At most this many paths; 0: all.
    pub head_limit: u64,
    pub hidden: bool,
    pub no_ignore: bool,
}

impl<'a> Request<'a> {
    pub fn parse(args: &'a Args) -> Result<Request<'a>, ToolError> {
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
        let head_limit = args.optional_count("head_limit")?.unwrap_or(0);
        let hidden = args.optional_bool("hidden")?.unwrap_or(false);
        let no_ignore = args.optional_bool("no_ignore")?.unwrap_or(false);
        Ok(Request { pattern, path, by_mtime, head_limit, hidden, no_ignore })
    }
}

pub fn run(args: &Args, context: &Context) -> Outcome {
    let request = Request::parse(args)?;
    let glob = Glob::new(request.path, request.pattern)?;
    if context.profile.is_full() {
        ignore_aware(&request, &glob, context)
    } else {
        every_path(&glob, context)
    }
}

/// The seed's answer: every path that matches, streamed into the output.
fn every_path(glob: &Glob, context: &Context) -> Outcome {
    let roots = context.roots()?;
    let mut output = Bounded::for_answer(context.answer_limit(0));
    let mut count: i64 = 0;
    let visit = |found: crate::fs::walk::Found<'_>| {
        output.push(found.path);
        output.push(b"\n");
        count += 1;
    };
    walk_within(glob, roots, visit)?;
    let mut output = output.finish_parts_with(|cut| marker::narrow(cut, marker::NARROW_GLOB));
    // Each path ends with a newline; the last one does not need it.
    limit::strip_final_newline(&mut output);
    Ok(vec![("output", Field::Parts(output)), ("count", Field::Int(count))])
}

/// The full profile's answer: the ignore-aware walk, sorted, cut at
/// `head_limit`.
fn ignore_aware(request: &Request, glob: &Glob, context: &Context) -> Outcome {
    let &Request { by_mtime, head_limit, hidden, no_ignore, .. } = request;
    let rules = Rules { hidden, no_ignore, overrides: None };
    let roots = context.roots()?;
    // An absolute pattern does not look in `path`.
    if let Some(path) = request.path.filter(|_| !request.pattern.starts_with('/')) {
        must_exist(path, roots)?;
    }
    // (modification time, path): newest first, then by path.
    let mut all: Vec<((i64, i64), Vec<u8>)> = Vec::new();
    let mut ignore_files = IgnoreFiles::new();
    glob_ignoring(glob, roots, &rules, &mut ignore_files, &mut |shown: &[u8], met: &Met<'_>| {
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
    let mut output = Bounded::for_answer(context.answer_limit(0));
    for (_, path) in all.iter().take(keep as usize) {
        output.push(path);
        output.push(b"\n");
    }
    let mut output = output.finish_parts_with(|cut| marker::narrow(cut, marker::NARROW_GLOB));
    limit::strip_final_newline(&mut output);
    let mut answer = vec![
        ("output", Field::Parts(output)),
        ("count", Field::Int(i64::try_from(count).unwrap_or(i64::MAX))),
    ];
    if keep < count {
        answer.push(("truncated", Field::Bool(true)));
    }
    answer.extend(ignore_files.field(&answer, context.answer_limit(0)));
    Ok(answer)
}

/// `FILE_NOT_FOUND` for a `path` that does not exist, as full grep answers
/// (docs/TOOLS.md, glob, "Full profile"): 0 matches would tell a model
/// there are no such files when the directory was mistyped. Any other
/// error is the walk's to meet (a `path` outside the roots is refused
/// there).
fn must_exist(path: &str, roots: Option<&Roots>) -> Result<(), ToolError> {
    let missing = match roots {
        None => std::fs::metadata(path).err(),
        Some(roots) => match roots.open_dir(path) {
            Err(ConfineError::Io(e)) => Some(e),
            _ => None,
        },
    };
    match missing {
        Some(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            Err(looked_up::explain(ToolError::FileNotFound(path.to_owned()), path, roots))
        }
        _ => Ok(()),
    }
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
