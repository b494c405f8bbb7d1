//! grep: the lines of files that match a regular expression (docs/TOOLS.md
//! grep, seed 000).
//!
//! `{"output":"PATH:LINE: TEXT\n…","count":N}`. The files are those glob
//! finds for `glob` (default `*`) under `path`, regular files only, in glob
//! order. Each file is searched as a whole buffer by ripgrep's searcher
//! (bulk line counting, NUL = binary, skipped); files are searched in
//! parallel and their results stitched back in order.
//!
//! Memory stays bounded by the output limit plus a constant, whatever the
//! files hold (README, "Output limit"): a file searched ahead of the files before it
//! holds at most `HOLD_AHEAD` bytes of lines; past that it waits for its
//! turn and hands its lines over to the answer, as it does from then on.
//! The files read whole take at most `WHOLE_TOTAL` across the threads.
//!
//! With allowed roots (README, "Confinement: allowed roots") the walk stays beneath them and each
//! file is opened from the descriptor of the directory the walk found it in
//! (`open_entry`, never following a link), never by its path.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

mod ordered;

use ordered::Turn;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};

use crate::confine::{open_entry, Roots};
use crate::context::{Context, DEFAULT_MAX_OUTPUT};
use crate::error::ToolError;
use crate::fs::pattern::{too_long, Glob, REGEX_SIZE_LIMIT};
use crate::fs::walk::{walk, walk_confined, Found};
use crate::json::Field;
use crate::limit::{self, Bounded};
use crate::protocol::{one_line, Args, Outcome};

/// At most this many threads search files.
const MAX_THREADS: usize = 8;
/// The longest line held in memory to be searched.
const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

pub fn run(args: &Args, context: &Context) -> Outcome {
    let pattern = args.required_str("pattern")?;
    let filter = match args.optional_str("glob")? {
        None | Some("") => None,
        Some(filter) => Some(filter),
    };
    let path = args.optional_path("path")?;
    // Both patterns are checked before any file is read.
    let matcher = matcher(pattern)?;
    let glob = Glob::new(path, filter.unwrap_or("*"))?;
    let roots = context.roots()?;
    if roots.is_some() {
        room_for_directories();
    }
    let mut named = match (roots, path) {
        (None, Some(file)) if is_regular_file(file) => Some(named_file(file, filter)?),
        (Some(roots), Some(path)) => named_file_confined(path, filter, roots)?,
        _ => None,
    };

    let limit = context.max_output;
    let output = Mutex::new(Bounded::for_answer(limit));
    let mut count: i64 = 0;
    let mut walked = Ok(());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS);
    let whole_max = (WHOLE_TOTAL / threads).clamp(BUFFER_START, WHOLE_MAX);
    // The walk feeds the files to the searching threads as it finds them.
    ordered::run(
        threads,
        || Worker::new(&matcher, whole_max),
        |worker, file: Item, turn| {
            let answer = Answer { output: &output, turn, limit };
            Some(search_file(worker, &file, Some(&answer)))
        },
        |result| result.as_ref().map_or(0, |r| r.output.kept()),
        // `None`: the search of a file panicked, which must not stop the rest.
        |result: Option<FileResult>| {
            if let Some(result) = result {
                count += result.lines;
                lock(&output).append(result.output);
            }
        },
        |feed| match (named.take(), roots) {
            (Some(files), _) => files.into_iter().for_each(feed),
            (None, None) => walk(&glob, |found| {
                if found.kind.is_file() {
                    feed(Item::of(found));
                }
            }),
            (None, Some(roots)) => {
                walked = walk_confined(&glob, roots, |found| {
                    if found.kind.is_file() {
                        feed(Item::of(found));
                    }
                });
            }
        },
    );
    walked?;
    let mut output = output.into_inner().unwrap_or_else(PoisonError::into_inner).finish_parts();
    // Each line ends with a newline; the last one does not need it.
    limit::strip_final_newline(&mut output);
    Ok(vec![("output", Field::Parts(output)), ("count", Field::Int(count))])
}

fn lock(output: &Mutex<Bounded>) -> MutexGuard<'_, Bounded> {
    output.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a file's lines end up, for a search that holds too many of them.
struct Answer<'a> {
    output: &'a Mutex<Bounded>,
    turn: &'a Turn<'a>,
    limit: Option<usize>,
}

/// Open files a confined search may need: each file waiting to be
/// searched holds its directory open (up to `ordered`'s queue, 64 a thread,
/// so about 600), besides the walk's own directories.
const CONFINED_FILES: u64 = 4096;

/// Raises the soft limit on open files to `CONFINED_FILES` where the hard
/// limit allows: under a low soft limit (`ulimit -Sn 256`) opening a file
/// from its directory would fail and the file would be passed over.
fn room_for_directories() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let wanted = CONFINED_FILES.min(hard);
        if soft < wanted {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, wanted, hard);
        }
    }
}

/// A file to search: its path as printed, and how to open it.
struct Item {
    path: Vec<u8>,
    source: Source,
}

enum Source {
    /// By its path (unconfined).
    Path,
    /// By its name (from this byte of `path`) in a directory the confined
    /// walk opened beneath the roots.
    Entry(Arc<OwnedFd>, usize),
    /// Opened already (a confined `path` naming a file).
    Opened(File),
}

impl Item {
    fn of(found: Found<'_>) -> Item {
        let source = match found.at {
            Some((dir, at)) => Source::Entry(Arc::clone(dir), at),
            None => Source::Path,
        };
        Item { path: found.path.to_vec(), source }
    }

    /// Opens the file without blocking (see `open`); confined, never by
    /// its path and never through a link.
    fn open(&self) -> std::io::Result<File> {
        match &self.source {
            Source::Path => open(&self.path),
            Source::Entry(dir, at) => {
                let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK;
                open_entry(dir.as_fd(), OsStr::from_bytes(&self.path[*at..]), flags).map(File::from)
            }
            Source::Opened(file) => file.try_clone(),
        }
    }
}

/// Confined, a `path` naming a file (see `named_file`): opened beneath the
/// roots, and selected by the filter as glob would, beneath them too. A
/// `path` outside the roots is refused; a directory is walked (`None`).
fn named_file_confined(
    path: &str,
    filter: Option<&str>,
    roots: &Roots,
) -> Result<Option<Vec<Item>>, ToolError> {
    match roots.open_dir(path) {
        Ok(_) => return Ok(None),
        Err(e) if e.is_refusal() => return Err(e.into_tool_error(path, ToolError::OpenFailed)),
        Err(_) => {}
    }
    let file = match roots.open_read(path) {
        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => file,
        Ok(_) => return Ok(None),
        Err(e) if e.is_refusal() => return Err(e.into_tool_error(path, ToolError::OpenFailed)),
        Err(_) => return Ok(None),
    };
    let item = |file| Item { path: path.as_bytes().to_vec(), source: Source::Opened(file) };
    let Some(filter) = filter else { return Ok(Some(vec![item(file)])) };
    let (dir, _) = path.rsplit_once('/').unwrap_or(("", path));
    let dir = if dir.is_empty() && path.starts_with('/') { "/" } else { dir };
    let in_dir = Glob::new(Some(dir).filter(|d| !d.is_empty()), filter)?;
    let identity = |s: rustix::fs::Stat| (s.st_dev, s.st_ino);
    let wanted = rustix::fs::fstat(&file).ok().map(identity);
    let mut selected = false;
    walk_confined(&in_dir, roots, |found| {
        selected |= found.kind.is_file()
            && found.at.is_some_and(|(dir, _)| {
                let name = OsStr::from_bytes(found.name());
                let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
                rustix::fs::statat(dir, name, flags).ok().map(identity) == wanted
            });
    })?;
    Ok(Some(if selected { vec![item(file)] } else { Vec::new() }))
}

fn is_regular_file(path: &str) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// `path` names a file rather than a directory (a model asking "search
/// src/main.c"): that file, as grep and ripgrep would search it. A `glob`
/// filter still applies to it, by the rules glob uses in its directory.
fn named_file(file: &str, filter: Option<&str>) -> Result<Vec<Item>, ToolError> {
    let item = || Item { path: file.as_bytes().to_vec(), source: Source::Path };
    let Some(filter) = filter else {
        return Ok(vec![item()]);
    };
    let (dir, _) = file.rsplit_once('/').unwrap_or(("", file));
    let dir = if dir.is_empty() && file.starts_with('/') { "/" } else { dir };
    let in_dir = Glob::new(Some(dir).filter(|d| !d.is_empty()), filter)?;
    let identity = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    let wanted = identity(Path::new(file));
    let mut selected = false;
    walk(&in_dir, |found| {
        selected |=
            found.kind.is_file() && identity(Path::new(OsStr::from_bytes(found.path))) == wanted;
    });
    Ok(if selected { vec![item()] } else { Vec::new() })
}

/// The regular expression, line by line: `^` and `$` at line boundaries
/// (`$` also before `\r\n`), never a match across lines.
fn matcher(pattern: &str) -> Result<RegexMatcher, ToolError> {
    let invalid = |e: &dyn std::fmt::Display| ToolError::InvalidRegex(one_line(&e.to_string()));
    // The bound glob's patterns have too (`fs::pattern`): a 100 KB regex
    // over a 100 KB line took half a minute (ripgrep: more than a minute).
    if let Some(why) = too_long(pattern.len()) {
        return Err(ToolError::InvalidRegex(why));
    }
    // grep-regex wraps the pattern in `(?:…)` before parsing, which would
    // show up in its messages; parse it as given first, with the same flags.
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(pattern)
        .map_err(|e| invalid(&e))?;
    RegexMatcherBuilder::new()
        .multi_line(true)
        .crlf(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build(pattern)
        .map_err(|e| invalid(&e))
}

fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_terminator(LineTerminator::crlf())
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        // Bytes as they are: a UTF-16 file is binary, not transcoded.
        .bom_sniffing(false)
        // One line may take this much memory; a longer one ends the search
        // of its file (the lines found before it are kept).
        .heap_limit(Some(MAX_LINE_BYTES))
        .build()
}

/// What one file gave.
struct FileResult {
    output: Bounded,
    lines: i64,
}

/// What each searching thread keeps from file to file.
struct Worker {
    searcher: Searcher,
    matcher: RegexMatcher,
    /// Holds the file being searched (see `read_up_to`).
    buffer: Vec<u8>,
    /// Files up to this size are read whole into `buffer`.
    whole_max: usize,
}

impl Worker {
    fn new(matcher: &RegexMatcher, whole_max: usize) -> Worker {
        Worker {
            searcher: searcher(),
            // Each thread its own matcher: a shared one hands its scratch
            // space to other threads through a lock, at every search.
            matcher: matcher.clone(),
            buffer: Vec::new(),
            whole_max,
        }
    }
}

/// Files up to this size are read whole and searched as one slice…
const WHOLE_MAX: usize = 8 * 1024 * 1024;
/// …as long as the threads' buffers for them take at most this in all.
const WHOLE_TOTAL: usize = 16 * 1024 * 1024;
/// The bytes of lines a file's search holds while files before it are
/// still being searched; past it, it waits for them and hands its lines
/// over to the answer.
const HOLD_AHEAD: usize = 1024 * 1024;
/// The whole-file buffer starts at this size (and grows to the largest
/// file read whole).
const BUFFER_START: usize = 256 * 1024;

/// Searches one file; a file that cannot be opened or read gives nothing,
/// a binary file (a NUL byte anywhere) gives nothing.
///
/// A file is read whole (up to `WHOLE_MAX`) with one read and the one that
/// finds its end, checked for a NUL with memchr, and searched as a slice:
/// fewer system calls than the searcher's own reading, which peeks at the
/// first three bytes for a byte-order mark with a read of their own. A
/// larger file is searched as a stream, the bytes already read first.
///
/// Without `answer` (tests), all lines are held until the end, with the
/// default limit.
fn search_file(worker: &mut Worker, item: &Item, answer: Option<&Answer<'_>>) -> FileResult {
    let limit = answer.map_or(Some(DEFAULT_MAX_OUTPUT), |a| a.limit);
    let Ok(file) = item.open() else {
        return FileResult { output: Bounded::for_answer(limit), lines: 0 };
    };
    let mut sink = Lines {
        path: &item.path,
        file: &file,
        output: Bounded::for_answer(limit),
        lines: 0,
        binary: false,
        line: Vec::new(),
        answer,
        known_text: false,
    };
    {
        let (read, whole) = read_up_to(&file, &mut worker.buffer, worker.whole_max);
        sink.known_text = whole;
        let content = &worker.buffer[..read];
        if whole {
            sink.binary = memchr::memchr(0, content).is_some();
            if !sink.binary {
                let _ = worker.searcher.search_slice(&worker.matcher, content, &mut sink);
            }
        } else {
            let rest = std::io::Cursor::new(content).chain(&file);
            // A read error part way keeps the lines found before it.
            let _ = worker.searcher.search_reader(&worker.matcher, rest, &mut sink);
        }
    }
    if sink.binary {
        return FileResult { output: Bounded::for_answer(limit), lines: 0 };
    }
    FileResult { output: sink.output, lines: sink.lines }
}

/// Reads `file` into `buffer` (grown as needed, never cleared: its bytes
/// past what is read are stale) until its end or past `max` bytes; how
/// many bytes were read and whether that is the whole file. Each read asks
/// for all the room there is, so a small file takes one read and the one
/// that finds its end. A read error ends the file where it happened.
fn read_up_to(file: &File, buffer: &mut Vec<u8>, max: usize) -> (usize, bool) {
    let mut read = 0;
    loop {
        if read == buffer.len() {
            if read > max {
                return (read, false);
            }
            buffer.resize((2 * read).clamp(BUFFER_START, max + 1), 0);
        }
        match (&*file).read(&mut buffer[read..]) {
            Ok(0) => return (read, true),
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (read, true),
        }
    }
}

/// Opens without blocking: the walk saw a regular file, but a FIFO put in
/// its place since must not hang the search.
fn open(path: &[u8]) -> std::io::Result<File> {
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(OsStr::from_bytes(path))
}

/// Collects `PATH:LINE: TEXT\n` for each matching line of one file.
struct Lines<'p> {
    path: &'p [u8],
    /// The file searched (read again from its start by `has_nul`).
    file: &'p File,
    output: Bounded,
    lines: i64,
    binary: bool,
    /// The line being formatted (reused).
    line: Vec<u8>,
    /// Where lines go once they are too many to hold.
    answer: Option<&'p Answer<'p>>,
    /// The file is known to hold no NUL (it was read whole and checked).
    known_text: bool,
}

impl Lines<'_> {
    /// Waits for the file's turn and hands the lines held over to the
    /// answer; false if the file turns out to be binary instead (lines
    /// handed over cannot be taken back, so a file searched as a stream is
    /// checked for a NUL first).
    fn hand_over(&mut self, answer: &Answer<'_>) -> bool {
        if !self.known_text {
            if has_nul(self.file) {
                self.binary = true;
                return false;
            }
            self.known_text = true;
        }
        answer.turn.wait();
        let held = std::mem::replace(&mut self.output, Bounded::for_answer(answer.limit));
        lock(answer.output).append(held);
        true
    }
}

/// Whether `file` holds a NUL byte (read from its start to its end, at
/// offsets: the search's own reading is not disturbed).
fn has_nul(file: &File) -> bool {
    let mut buf = vec![0u8; BUFFER_START];
    let mut offset = 0u64;
    loop {
        match file.read_at(&mut buf, offset) {
            Ok(0) => return false,
            Ok(n) if memchr::memchr(0, &buf[..n]).is_some() => return true,
            Ok(n) => offset += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

impl Sink for Lines<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        let first = found.line_number().unwrap_or(0);
        for (number, text) in (first..).zip(found.lines()) {
            let text = text.strip_suffix(b"\n").unwrap_or(text);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            self.line.clear();
            self.line.extend_from_slice(self.path);
            self.line.push(b':');
            let _ = write!(self.line, "{number}");
            self.line.extend_from_slice(b": ");
            self.line.extend_from_slice(text);
            self.line.push(b'\n');
            self.output.push(&self.line);
            self.lines += 1;
        }
        if let Some(answer) = self.answer {
            if self.output.kept() > HOLD_AHEAD && !self.hand_over(answer) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a file searched whole and as a stream (past `whole_max`)
    /// are the same, NUL bytes make it binary either way.
    #[test]
    fn files_read_whole_and_streamed_give_the_same_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let text: String = (1..=3000u32)
            .map(|i| format!("line {i}{}\n", if i.is_multiple_of(7) { " hit" } else { "" }))
            .collect();
        let matcher = matcher("hit$").unwrap();
        let mut worker = Worker::new(&matcher, WHOLE_MAX);
        let p = &Item { path: path.to_str().unwrap().as_bytes().to_vec(), source: Source::Path };
        for binary in [false, true] {
            let mut content = text.clone().into_bytes();
            if binary {
                content[20_000] = 0;
            }
            std::fs::write(&path, &content).unwrap();
            worker.whole_max = WHOLE_MAX;
            let whole = search_file(&mut worker, p, None);
            for max in [0, 1, 100, 4096, content.len() - 1, content.len()] {
                worker.whole_max = max;
                let part = search_file(&mut worker, p, None);
                assert_eq!(part.lines, whole.lines, "max {max}");
                assert_eq!(part.output.finish(), whole.output.head().to_vec(), "max {max}");
            }
            assert_eq!(whole.lines, if binary { 0 } else { 3000 / 7 });
        }
    }
}
