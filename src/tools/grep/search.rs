//! How grep searches: each file as a whole buffer by ripgrep's searcher
//! (bulk line counting, NUL = binary, skipped), files in parallel and
//! their results stitched back in order (`ordered`). The same for both
//! profiles: what differs is which files are fed (`files`).
//!
//! The files read whole take at most `WHOLE_TOTAL` across the threads.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};

use super::files::{Files, Item, Walked};
use super::ordered;
use super::print::{Entries, FileOut, InTurn, Printer};
use super::regex_error;
use super::request::{Mode, Request};
use crate::error::{one_line, ToolError};
use crate::fs::pattern::{too_long, REGEX_SIZE_LIMIT};

/// At most this many threads search files.
const MAX_THREADS: usize = 8;
/// The longest line held in memory to be searched.
const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// Files up to this size are read whole and searched as one slice…
const WHOLE_MAX: usize = 8 * 1024 * 1024;
/// …as long as the threads' buffers for them take at most this in all.
const WHOLE_TOTAL: usize = 16 * 1024 * 1024;
/// The whole-file buffer starts at this size (and grows to the largest
/// file read whole).
const BUFFER_START: usize = 256 * 1024;

/// Searches every file `files` gives for `matcher` as `request` asks,
/// printing their entries into `printer` in the order of the files; what
/// the walk left out. The walk feeds the files to the searching threads as
/// it finds them.
pub(super) fn search(
    files: Files<'_>,
    matcher: &RegexMatcher,
    request: &Request<'_>,
    printer: &Printer,
) -> Result<Walked, ToolError> {
    let threads = files.threads().clamp(1, MAX_THREADS);
    let whole_max = (WHOLE_TOTAL / threads).clamp(BUFFER_START, WHOLE_MAX);
    let mut walked = Ok(Walked::default());
    ordered::run(
        threads,
        || Worker::new(matcher, request, whole_max),
        |worker, item: Item, turn| {
            let in_turn = InTurn { printer, turn };
            Some(search_file(worker, &item, Some(&in_turn)))
        },
        |out| out.as_ref().map_or(0, |o| o.buf.len()),
        // `None`: the search of a file panicked, which must not stop the rest.
        |out: Option<FileOut>| {
            if let Some(out) = out {
                printer.file(out);
            }
        },
        |feed| walked = files.feed(feed),
    );
    walked
}

/// The regular expression as `request` reads it, line by line: `^` and `$`
/// at line boundaries (`$` also before `\r\n`), never a match across lines
/// unless `multiline` (`rg -U`); `rg -i`, `rg -F` as asked.
pub(super) fn matcher(request: &Request<'_>) -> Result<RegexMatcher, ToolError> {
    let pattern = request.pattern;
    let invalid = |e: &dyn std::fmt::Display| ToolError::InvalidRegex(one_line(&e.to_string()));
    // The bound glob's patterns have too (`fs::pattern`): a 100 KB regex
    // over a 100 KB line took half a minute (ripgrep: more than a minute).
    if let Some(why) = too_long(pattern.len()) {
        return Err(ToolError::InvalidRegex(why));
    }
    // grep-regex wraps the pattern in `(?:…)` before parsing, which would
    // show up in its messages; parse it as given first, with the same flags.
    if !request.fixed_strings {
        regex_syntax::ParserBuilder::new()
            .utf8(false)
            .multi_line(true)
            .crlf(true)
            .case_insensitive(request.case_insensitive)
            .build()
            .parse(pattern)
            .map_err(|e| match regex_error::told(&e) {
                Some(told) => ToolError::InvalidRegex(told),
                None => invalid(&e),
            })?;
    }
    let mut builder = RegexMatcherBuilder::new();
    builder.multi_line(true).crlf(true);
    if request.multiline {
        builder.line_terminator(None);
    }
    builder
        .case_insensitive(request.case_insensitive)
        .fixed_strings(request.fixed_strings)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build(pattern)
        .map_err(|e| invalid(&e))
}

fn searcher(request: &Request<'_>) -> Searcher {
    // Context lines are printed in content mode only.
    let context = request.mode == Mode::Content;
    SearcherBuilder::new()
        .line_terminator(LineTerminator::crlf())
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\0'))
        // Bytes as they are: a UTF-16 file is binary, not transcoded.
        .bom_sniffing(false)
        // One line may take this much memory; a longer one ends the search
        // of its file (the lines found before it are kept).
        .heap_limit(Some(MAX_LINE_BYTES))
        .multi_line(request.multiline)
        .before_context(if context { request.before } else { 0 })
        .after_context(if context { request.after } else { 0 })
        .build()
}

/// What each searching thread keeps from file to file.
struct Worker<'r> {
    searcher: Searcher,
    matcher: RegexMatcher,
    request: &'r Request<'r>,
    /// Holds the file being searched (see `read_up_to`).
    buffer: Vec<u8>,
    /// Files up to this size are read whole into `buffer`.
    whole_max: usize,
}

impl<'r> Worker<'r> {
    fn new(matcher: &RegexMatcher, request: &'r Request<'r>, whole_max: usize) -> Worker<'r> {
        Worker {
            searcher: searcher(request),
            // Each thread its own matcher: a shared one hands its scratch
            // space to other threads through a lock, at every search.
            matcher: matcher.clone(),
            request,
            buffer: Vec::new(),
            whole_max,
        }
    }
}

/// Searches one file; a file that cannot be opened or read gives nothing,
/// a binary file (a NUL byte anywhere) gives nothing; both are counted as
/// skipped.
///
/// A file is read whole (up to `WHOLE_MAX`) with one read and the one that
/// finds its end, checked for a NUL with memchr, and searched as a slice:
/// fewer system calls than the searcher's own reading, which peeks at the
/// first three bytes for a byte-order mark with a read of their own. A
/// larger file is searched as a stream, the bytes already read first.
///
/// Without `in_turn` (tests), all entries are held until the end.
fn search_file(worker: &mut Worker<'_>, item: &Item, in_turn: Option<&InTurn<'_>>) -> FileOut {
    let Ok(file) = item.open() else { return FileOut::default() };
    let (read, whole) =
        read_up_to(&file, &mut worker.buffer, worker.whole_max, item.short_read_ends);
    let content = &worker.buffer[..read];
    if whole && memchr::memchr(0, content).is_some() {
        return FileOut::default();
    }
    let mut sink = Entries::new(&item.path, &file, worker.request, whole, in_turn);
    search_content(&mut worker.searcher, &worker.matcher, content, whole, &file, &mut sink);
    sink.finish()
}

/// Searches a file whose first bytes, `content`, are read: all of it when
/// `whole`, else `content` and then the rest of `file` as a stream. A read
/// error part way keeps what `sink` found before it.
fn search_content<S: grep_searcher::Sink>(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    content: &[u8],
    whole: bool,
    file: &File,
    sink: &mut S,
) {
    if whole {
        let _ = searcher.search_slice(matcher, content, sink);
    } else {
        let rest = std::io::Cursor::new(content).chain(file);
        let _ = searcher.search_reader(matcher, rest, sink);
    }
}

/// Reads `file` into `buffer` (grown as needed, never cleared: its bytes
/// past what is read are stale) until its end or past `max` bytes; how
/// many bytes were read and whether that is the whole file. Each read asks
/// for all the room there is, so a small file takes one read and the one
/// that finds its end. A read error ends the file where it happened. With
/// `short_read_ends`, a read that returns less than it asked for is taken
/// as the end of the file (true of regular files on page-cache file
/// systems: `fs::walk::ignored::page_cached`).
fn read_up_to(
    file: &File,
    buffer: &mut Vec<u8>,
    max: usize,
    short_read_ends: bool,
) -> (usize, bool) {
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
            Ok(n) => {
                let asked = buffer.len() - read;
                read += n;
                if short_read_ends && n < asked {
                    return (read, true);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (read, true),
        }
    }
}

/// Whether `file` holds a NUL byte (read from its start to its end, at
/// offsets: the search's own reading is not disturbed).
pub(super) fn has_nul(file: &File) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Args;

    /// Taking a short read as the end reads the same bytes, whatever the
    /// size against the buffer (on the test's file system, local).
    #[test]
    fn a_short_read_as_the_end_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let b = BUFFER_START;
        for size in [0, 1, b - 1, b, b + 1, 2 * b, 3 * b + 7] {
            let content: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            std::fs::write(&path, &content).unwrap();
            for max in [b, 2 * b, 4 * b] {
                let (mut plain, mut short) = (Vec::new(), Vec::new());
                let file = File::open(&path).unwrap();
                let a = read_up_to(&file, &mut plain, max, false);
                let file = File::open(&path).unwrap();
                let c = read_up_to(&file, &mut short, max, true);
                assert_eq!(a, c, "size {size} max {max}");
                assert_eq!(plain[..a.0], short[..c.0], "size {size} max {max}");
            }
        }
    }

    /// Entries of a file searched whole and as a stream (past `whole_max`)
    /// are the same in every output mode, and multi-line; NUL bytes make it
    /// binary either way.
    #[test]
    fn files_read_whole_and_streamed_give_the_same_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let text: String = (1..=3000u32)
            .map(|i| format!("line {i}{}\n", if i.is_multiple_of(7) { " hit" } else { "" }))
            .collect();
        let p = &Item::by_path(path.to_str().unwrap().as_bytes());
        let calls = [
            (r#"{"pattern":"hit$"}"#, 3000 / 7),
            (r#"{"pattern":"hit$","output_mode":"count"}"#, 3000 / 7),
            (r#"{"pattern":"hit$","output_mode":"files_with_matches"}"#, 1),
            (r#"{"pattern":"hit\nline","multiline":true}"#, 2 * (3000 / 7)),
        ];
        for (call, count) in calls {
            let args = Args::parse(call.as_bytes()).unwrap();
            let request = Request::parse(&args).unwrap();
            let matcher = matcher(&request).unwrap();
            let mut worker = Worker::new(&matcher, &request, WHOLE_MAX);
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
                    assert_eq!(part.count, whole.count, "{call} max {max}");
                    assert_eq!(part.buf, whole.buf, "{call} max {max}");
                }
                assert_eq!(whole.count, if binary { 0 } else { count }, "{call}");
            }
        }
    }
}
