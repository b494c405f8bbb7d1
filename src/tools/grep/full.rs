//! grep in the full profile (docs/TOOLS.md, grep, "Full profile"): ripgrep's
//! defaults and options on the same searcher and the same ordered parallel
//! search as the seed profile.
//!
//! - what is searched: `path` itself when it names a file (as `rg` searches
//!   a file it is given, whatever the rules), else the walk of
//!   `fs::walk::ignored` below it, the `glob` an override (`rg -g`);
//! - each file gives its entries (lines, `--`, a path, `PATH:N`), which the
//!   `Pager` takes in the order of the files, keeping those of the page
//!   (`offset`, `head_limit`) within the output limit and counting the rest;
//! - memory stays bounded as in the seed profile: a file holding more than
//!   `HOLD_AHEAD` of entries waits for its turn and hands them over.

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_matcher::LineTerminator;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};

use super::files::{self, Item};
use super::ordered::{self, Turn};
use super::print::HOLD_AHEAD;
use super::search::{self, has_nul, read_up_to_with, Pattern};
use crate::context::Context;
use crate::error::{GlobFault, ToolError};
use crate::fs::walk::ignore_files::IgnoreFiles;
use crate::fs::walk::ignored::{walk_ignoring, Met, Rules};
use crate::fs::walk::Kind;
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::protocol::{Args, Outcome};

/// At most this many threads search files (as the seed profile).
const MAX_THREADS: usize = 8;
/// The longest line held in memory to be searched.
const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;
/// Files up to this size are read whole (the threads' buffers for them
/// taking at most `WHOLE_TOTAL`), as in the seed profile.
const WHOLE_MAX: usize = 8 * 1024 * 1024;
const WHOLE_TOTAL: usize = 16 * 1024 * 1024;
const BUFFER_START: usize = 256 * 1024;

/// What the answer lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Content,
    FilesWithMatches,
    Count,
}

/// The call's options, checked.
struct Options {
    mode: Mode,
    before: usize,
    after: usize,
    multiline: bool,
    offset: u64,
    /// 0: no limit.
    head_limit: u64,
}

pub(super) fn run(args: &Args, context: &Context) -> Outcome {
    let pattern = args.required_str("pattern")?;
    let path = args.optional_path("path")?;
    let filter = args.optional_str("glob")?.filter(|g| !g.is_empty());
    let mode = match args.optional_str("output_mode")? {
        None | Some("content") => Mode::Content,
        Some("files_with_matches") => Mode::FilesWithMatches,
        Some("count") => Mode::Count,
        Some(other) => {
            return Err(ToolError::InvalidArg(format!(
                "parameter output_mode must be content, files_with_matches or count, not {other:?}"
            )))
        }
    };
    let both = not_negative(args, "context")?;
    let options = Options {
        mode,
        before: not_negative(args, "before")?.or(both).unwrap_or(0) as usize,
        after: not_negative(args, "after")?.or(both).unwrap_or(0) as usize,
        multiline: args.optional_bool("multiline")?.unwrap_or(false),
        offset: not_negative(args, "offset")?.unwrap_or(0),
        head_limit: not_negative(args, "head_limit")?.unwrap_or(0),
    };
    let rules = Rules {
        hidden: args.optional_bool("hidden")?.unwrap_or(false),
        no_ignore: args.optional_bool("no_ignore")?.unwrap_or(false),
        overrides: filter.map(overrides).transpose()?,
    };
    let matcher = search::matcher_with(
        pattern,
        Pattern {
            case_insensitive: args.optional_bool("case_insensitive")?.unwrap_or(false),
            fixed_strings: args.optional_bool("fixed_strings")?.unwrap_or(false),
            multiline: options.multiline,
        },
    )?;
    let roots = context.roots()?;
    if roots.is_some() {
        files::room_for_directories();
    }
    let named = match path {
        Some(path) => files::named(path, None, roots)?,
        None => None,
    };
    let pager = Mutex::new(Pager::new(&options, context.max_output));
    let mut walk_skipped: i64 = 0;
    let mut ignore_files = IgnoreFiles::new();
    let mut walked = Ok(());
    // Twice the cores: the walk runs on the feeding thread and reads wait in
    // the kernel (7,911 files on 2 cores: 51 ms with 2 threads, 42 with 3,
    // 41 with 4; rg 51). Threads only start once files wait for them.
    let threads =
        std::thread::available_parallelism().map_or(1, |n| 2 * n.get()).clamp(1, MAX_THREADS);
    let whole_max = (WHOLE_TOTAL / threads).clamp(BUFFER_START, WHOLE_MAX);
    let (pager_ref, options_ref) = (&pager, &options);
    ordered::run(
        threads,
        || Worker::new(&matcher, options_ref, whole_max),
        |worker, item: Item, turn| Some(search_file(worker, &item, pager_ref, turn)),
        |out| out.as_ref().map_or(0, |o| o.buf.len()),
        |out: Option<FileOut>| {
            if let Some(out) = out {
                lock(pager_ref).file(out);
            }
        },
        |feed| match named {
            Some(items) => items.into_iter().for_each(feed),
            None => {
                walked =
                    walk_ignoring(path, roots, &rules, &mut ignore_files, &mut |met: &Met<'_>| {
                        if met.kept && met.kind == Kind::File {
                            feed(Item::entry(met.path, met.dir, met.name_at, met.local));
                        } else if !(met.kept && met.kind.is_dir()) {
                            walk_skipped += 1;
                        }
                        true
                    })
            }
        },
    );
    walked?;
    let pager = pager.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut answer = pager.answer(walk_skipped);
    answer.extend(ignore_files.field(&answer, context.max_output));
    Ok(answer)
}

/// An integer parameter that may not be negative.
fn not_negative(args: &Args, name: &str) -> Result<Option<u64>, ToolError> {
    match args.optional_int(name)? {
        Some(n) if n < 0 => {
            Err(ToolError::InvalidArg(format!("parameter {name} must not be negative, got {n}")))
        }
        n => Ok(n.map(|n| n as u64)),
    }
}

/// `glob` as `rg -g` takes it, matched against the path below `path`.
fn overrides(glob: &str) -> Result<ignore::overrides::Override, ToolError> {
    if let Some(why) = crate::fs::pattern::too_long(glob.len()) {
        return Err(ToolError::GlobTooLarge(why));
    }
    let invalid = |e: ignore::Error| {
        ToolError::InvalidGlob(GlobFault::Other(crate::error::one_line(&e.to_string())))
    };
    let mut builder = ignore::overrides::OverrideBuilder::new(".");
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

/// The answer's entries, in the order of the files, the page kept.
struct Pager {
    output: Bounded,
    /// `--` between the groups of different files (context lines asked).
    separate: bool,
    offset: u64,
    head_limit: u64,
    /// Entries met so far.
    seen: u64,
    count: i64,
    searched: i64,
    skipped: i64,
}

impl Pager {
    fn new(options: &Options, limit: Option<usize>) -> Pager {
        Pager {
            output: Bounded::for_answer(limit),
            separate: options.mode == Mode::Content && (options.before > 0 || options.after > 0),
            offset: options.offset,
            head_limit: options.head_limit,
            seen: 0,
            count: 0,
            searched: 0,
            skipped: 0,
        }
    }

    /// Takes entries of a file (each ending with a newline); `first`: the
    /// file's first ones, after a `--` if an earlier file gave some.
    fn entries(&mut self, buf: &[u8], first: bool) {
        if buf.is_empty() {
            return;
        }
        if first && self.separate && self.seen > 0 {
            self.entry(b"--\n");
        }
        if self.offset == 0 && self.head_limit == 0 {
            self.output.push(buf);
            self.seen += memchr::memchr_iter(b'\n', buf).count() as u64;
            return;
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', buf) {
            self.entry(&buf[start..=end]);
            start = end + 1;
        }
    }

    fn entry(&mut self, line: &[u8]) {
        let index = self.seen;
        self.seen += 1;
        if index >= self.offset && (self.head_limit == 0 || index - self.offset < self.head_limit) {
            self.output.push(line);
        }
    }

    /// Takes what is left of a file's result, and its numbers.
    fn file(&mut self, out: FileOut) {
        self.entries(&out.buf, !out.handed);
        self.count += out.count;
        if out.searched {
            self.searched += 1;
        } else {
            self.skipped += 1;
        }
    }

    fn answer(self, walk_skipped: i64) -> Vec<(&'static str, Field)> {
        let next = self.offset.saturating_add(self.head_limit);
        let cut = self.head_limit > 0 && self.seen > next;
        let mut output = self.output.finish_parts();
        // Each entry ends with a newline; the last one does not need it.
        limit::strip_final_newline(&mut output);
        let mut answer = vec![
            ("output", Field::Parts(output)),
            ("count", Field::Int(self.count)),
            ("files_searched", Field::Int(self.searched)),
            ("files_skipped", Field::Int(self.skipped + walk_skipped)),
        ];
        if cut {
            answer.push(("next_offset", Field::Int(i64::try_from(next).unwrap_or(i64::MAX))));
        }
        answer
    }
}

fn lock(pager: &Mutex<Pager>) -> MutexGuard<'_, Pager> {
    pager.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What one file gave: the entries not yet handed over, and its numbers.
#[derive(Default)]
struct FileOut {
    buf: Vec<u8>,
    /// Some entries were handed over to the pager already.
    handed: bool,
    count: i64,
    /// Searched (neither binary nor unreadable).
    searched: bool,
}

/// What each searching thread keeps from file to file.
struct Worker {
    searcher: Searcher,
    matcher: RegexMatcher,
    buffer: Vec<u8>,
    whole_max: usize,
    mode: Mode,
    multiline: bool,
}

impl Worker {
    fn new(matcher: &RegexMatcher, options: &Options, whole_max: usize) -> Worker {
        let context = options.mode == Mode::Content;
        let searcher = SearcherBuilder::new()
            .line_terminator(LineTerminator::crlf())
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\0'))
            .bom_sniffing(false)
            .heap_limit(Some(MAX_LINE_BYTES))
            .multi_line(options.multiline)
            .before_context(if context { options.before } else { 0 })
            .after_context(if context { options.after } else { 0 })
            .build();
        Worker {
            searcher,
            matcher: matcher.clone(),
            buffer: Vec::new(),
            whole_max,
            mode: options.mode,
            multiline: options.multiline,
        }
    }
}

/// Searches one file (read whole, or as a stream past `whole_max`, as the
/// seed profile does); a binary or unreadable file gives nothing and is
/// counted as skipped.
fn search_file(worker: &mut Worker, item: &Item, pager: &Mutex<Pager>, turn: &Turn<'_>) -> FileOut {
    let Ok(file) = item.open() else { return FileOut::default() };
    let (read, whole) =
        read_up_to_with(&file, &mut worker.buffer, worker.whole_max, item.short_read_ends);
    let content = &worker.buffer[..read];
    if whole && memchr::memchr(0, content).is_some() {
        return FileOut::default();
    }
    let mut sink = Entries {
        path: &item.path,
        file: &file,
        mode: worker.mode,
        out: FileOut { searched: true, ..FileOut::default() },
        lines: 0,
        binary: false,
        known_text: whole,
        multiline: worker.multiline,
        pager,
        turn,
    };
    search::search_content(&mut worker.searcher, &worker.matcher, content, whole, &file, &mut sink);
    sink.finish()
}

/// Collects one file's entries.
struct Entries<'a> {
    path: &'a [u8],
    file: &'a File,
    mode: Mode,
    out: FileOut,
    /// Matching lines.
    lines: i64,
    binary: bool,
    known_text: bool,
    multiline: bool,
    pager: &'a Mutex<Pager>,
    turn: &'a Turn<'a>,
}

impl Entries<'_> {
    fn line(&mut self, separator: u8, number: u64, text: &[u8]) {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let buf = &mut self.out.buf;
        buf.extend_from_slice(self.path);
        buf.push(separator);
        let _ = write!(buf, "{number}");
        buf.push(separator);
        buf.push(b' ');
        buf.extend_from_slice(text);
        buf.push(b'\n');
    }

    /// Whether the file is text: known when read whole, else read once.
    fn is_text(&mut self) -> bool {
        if !self.known_text && !self.binary {
            self.binary = has_nul(self.file);
            self.known_text = true;
        }
        !self.binary
    }

    /// Past `HOLD_AHEAD`, waits for the file's turn and hands the entries
    /// over; false when the file turns out to be binary.
    fn bounded(&mut self) -> bool {
        if self.out.buf.len() <= HOLD_AHEAD {
            return true;
        }
        if !self.is_text() {
            return false;
        }
        self.turn.wait();
        lock(self.pager).entries(&self.out.buf, !self.out.handed);
        self.out.handed = true;
        self.out.buf.clear();
        true
    }

    fn finish(mut self) -> FileOut {
        // A file read as a stream may hold a NUL past what the searcher
        // looked at: past a match, or anywhere when a multi-line search
        // read it whole without looking.
        if (self.lines > 0 || self.multiline) && !self.is_text() {
            self.binary = true;
        }
        if self.binary {
            return FileOut::default();
        }
        match self.mode {
            Mode::Content => self.out.count = self.lines,
            Mode::FilesWithMatches if self.lines > 0 => {
                self.out.buf.extend_from_slice(self.path);
                self.out.buf.push(b'\n');
                self.out.count = 1;
            }
            Mode::Count if self.lines > 0 => {
                self.out.buf.extend_from_slice(self.path);
                let _ = writeln!(self.out.buf, ":{}", self.lines);
                self.out.count = self.lines;
            }
            _ => {}
        }
        self.out
    }
}

impl Sink for Entries<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        match self.mode {
            Mode::Content => {
                let first = found.line_number().unwrap_or(0);
                for (number, text) in (first..).zip(found.lines()) {
                    self.line(b':', number, text);
                    self.lines += 1;
                }
                Ok(self.bounded())
            }
            Mode::Count => {
                self.lines += found.lines().count() as i64;
                Ok(true)
            }
            // One match is enough to list the file.
            Mode::FilesWithMatches => {
                self.lines += 1;
                Ok(false)
            }
        }
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if *context.kind() == SinkContextKind::Other {
            return Ok(true);
        }
        let number = context.line_number().unwrap_or(0);
        self.line(b'-', number, context.bytes());
        Ok(self.bounded())
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.out.buf.extend_from_slice(b"--\n");
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}
