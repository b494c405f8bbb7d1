//! How grep searches: each file as a whole buffer by ripgrep's searcher
//! (bulk line counting, NUL = binary, skipped), files in parallel and
//! their results stitched back in order (`ordered`).
//!
//! The files read whole take at most `WHOLE_TOTAL` across the threads.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};

use super::files::{Files, Item};
use super::ordered;
use super::print::{Answer, FileResult, InTurn, Lines};
use crate::error::one_line;
use crate::error::ToolError;
use crate::fs::pattern::{too_long, REGEX_SIZE_LIMIT};
use crate::limit::Bounded;

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

/// Searches every file `files` gives for `matcher`, printing their lines
/// into `answer` in the order of the files; how many lines matched. The
/// walk feeds the files to the searching threads as it finds them.
pub(super) fn search(
    files: Files<'_>,
    matcher: &RegexMatcher,
    answer: &Answer,
) -> Result<i64, ToolError> {
    let mut count: i64 = 0;
    let mut fed = Ok(());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS);
    let whole_max = (WHOLE_TOTAL / threads).clamp(BUFFER_START, WHOLE_MAX);
    ordered::run(
        threads,
        || Worker::new(matcher, whole_max),
        |worker, file: Item, turn| {
            let in_turn = InTurn { answer, turn };
            Some(search_file(worker, &file, Some(&in_turn)))
        },
        |result| result.as_ref().map_or(0, |r| r.output.kept()),
        // `None`: the search of a file panicked, which must not stop the rest.
        |result: Option<FileResult>| {
            if let Some(result) = result {
                count += result.lines;
                answer.append(result.output);
            }
        },
        |feed| fed = files.feed(feed),
    );
    fed?;
    Ok(count)
}

/// The regular expression, line by line: `^` and `$` at line boundaries
/// (`$` also before `\r\n`), never a match across lines.
pub(super) fn matcher(pattern: &str) -> Result<RegexMatcher, ToolError> {
    matcher_with(pattern, Pattern::default())
}

/// How the full profile reads a pattern (`rg -i`, `rg -F`).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Pattern {
    pub(super) case_insensitive: bool,
    pub(super) fixed_strings: bool,
    /// Matches may span lines (`rg -U`): no line terminator is kept out.
    pub(super) multiline: bool,
}

/// `matcher`, the pattern read as `how` says.
pub(super) fn matcher_with(pattern: &str, how: Pattern) -> Result<RegexMatcher, ToolError> {
    let invalid = |e: &dyn std::fmt::Display| ToolError::InvalidRegex(one_line(&e.to_string()));
    // The bound glob's patterns have too (`fs::pattern`): a 100 KB regex
    // over a 100 KB line took half a minute (ripgrep: more than a minute).
    if let Some(why) = too_long(pattern.len()) {
        return Err(ToolError::InvalidRegex(why));
    }
    // grep-regex wraps the pattern in `(?:…)` before parsing, which would
    // show up in its messages; parse it as given first, with the same flags.
    if !how.fixed_strings {
        regex_syntax::ParserBuilder::new()
            .utf8(false)
            .multi_line(true)
            .crlf(true)
            .case_insensitive(how.case_insensitive)
            .build()
            .parse(pattern)
            .map_err(|e| invalid(&e))?;
    }
    let mut builder = RegexMatcherBuilder::new();
    builder.multi_line(true).crlf(true);
    if how.multiline {
        builder.line_terminator(None);
    }
    builder
        .case_insensitive(how.case_insensitive)
        .fixed_strings(how.fixed_strings)
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

/// Searches one file; a file that cannot be opened or read gives nothing,
/// a binary file (a NUL byte anywhere) gives nothing.
///
/// A file is read whole (up to `WHOLE_MAX`) with one read and the one that
/// finds its end, checked for a NUL with memchr, and searched as a slice:
/// fewer system calls than the searcher's own reading, which peeks at the
/// first three bytes for a byte-order mark with a read of their own. A
/// larger file is searched as a stream, the bytes already read first.
///
/// Without `in_turn` (tests), all lines are held until the end, with the
/// limit of the environment.
fn search_file(worker: &mut Worker, item: &Item, in_turn: Option<&InTurn<'_>>) -> FileResult {
    let limit = in_turn.map_or(Some(crate::limit::DEFAULT_MAX_OUTPUT), |a| a.answer.limit());
    let Ok(file) = item.open() else {
        return FileResult { output: Bounded::for_answer(limit), lines: 0 };
    };
    let (read, whole) = read_up_to(&file, &mut worker.buffer, worker.whole_max);
    let content = &worker.buffer[..read];
    if whole && memchr::memchr(0, content).is_some() {
        return FileResult { output: Bounded::for_answer(limit), lines: 0 };
    }
    let mut sink = Lines::new(&item.path, &file, limit, in_turn, whole);
    search_content(&mut worker.searcher, &worker.matcher, content, whole, &file, &mut sink);
    sink.finish()
}

/// Searches a file whose first bytes, `content`, are read: all of it when
/// `whole`, else `content` and then the rest of `file` as a stream. A read
/// error part way keeps what `sink` found before it.
pub(super) fn search_content<S: grep_searcher::Sink>(
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
/// that finds its end. A read error ends the file where it happened.
pub(super) fn read_up_to(file: &File, buffer: &mut Vec<u8>, max: usize) -> (usize, bool) {
    read_up_to_with(file, buffer, max, false)
}

/// `read_up_to`; with `short_read_ends`, a read that returns less than it
/// asked for is taken as the end of the file (true of regular files on
/// page-cache file systems: `fs::walk::ignored::page_cached`).
pub(super) fn read_up_to_with(
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
                let a = read_up_to_with(&file, &mut plain, max, false);
                let file = File::open(&path).unwrap();
                let c = read_up_to_with(&file, &mut short, max, true);
                assert_eq!(a, c, "size {size} max {max}");
                assert_eq!(plain[..a.0], short[..c.0], "size {size} max {max}");
            }
        }
    }

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
        let p = &Item::by_path(path.to_str().unwrap().as_bytes());
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
