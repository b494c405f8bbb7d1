//! How grep's answer is printed: each file's entries (`PATH:LINE: TEXT`
//! for a matching line, `PATH-LINE- TEXT` for a line of context, `--`
//! between groups, a path, `PATH:N`), the files in order, the page kept
//! (`offset`, `head_limit`), within the output limit. The full profile
//! keeps whole entries from the start up to the limit and pages on from the
//! first it left out (`next_offset`), as `head_limit` does; the seed, which
//! has no `offset`, keeps head and tail and says to narrow the search
//! (docs/SPEC.md, "Output limit").
//!
//! The entries held stay bounded by the output limit, whatever the files
//! hold (docs/SPEC.md, "Output limit"): a file searched ahead of the files
//! before it holds at most `HOLD_AHEAD` bytes of entries; past that it
//! waits for its turn and hands them over to the `Printer`, as it does from
//! then on. A matching line is formatted whole first (`Entries::line`):
//! with the searcher's buffer, a thread may hold the longest line twice, up
//! to 512 MiB (docs/TOOLS.md, grep).

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};

use super::ordered::Turn;
use super::request::{Mode, Request};
use super::search::has_nul;
use crate::json::Field;
use crate::limit::{self, marker, Bounded};

/// The bytes of entries a file's search holds while files before it are
/// still being searched; past it, it waits for them and hands its entries
/// over to the printer.
pub(super) const HOLD_AHEAD: usize = 1024 * 1024;

/// The answer being printed: the files' entries in the files' order, the
/// page kept, and the numbers of the answer.
pub(super) struct Printer {
    page: Mutex<Page>,
}

struct Page {
    output: Bounded,
    /// `--` between the groups of different files (context lines asked).
    separate: bool,
    offset: u64,
    /// 0: no limit.
    head_limit: u64,
    /// Entries met so far.
    seen: u64,
    /// Full profile: the output pages on at the limit (`offset` exists).
    paged: bool,
    /// The first entry the output limit left out, when it cut the page.
    cut_at: Option<u64>,
    count: i64,
    searched: i64,
    skipped: i64,
}

impl Printer {
    /// `paged`: the full profile, whose `offset` continues a page the
    /// output limit cut.
    pub(super) fn new(request: &Request<'_>, limit: Option<usize>, paged: bool) -> Printer {
        let output =
            if paged { Bounded::for_answer_from_start(limit) } else { Bounded::for_answer(limit) };
        Printer {
            page: Mutex::new(Page {
                output,
                separate: request.has_context(),
                offset: request.offset,
                head_limit: request.head_limit,
                seen: 0,
                paged,
                cut_at: None,
                count: 0,
                searched: 0,
                skipped: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Page> {
        self.page.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes what is left of a file's result, and its numbers.
    pub(super) fn file(&self, out: FileOut) {
        let mut page = self.lock();
        page.entries(&out.buf, !out.handed);
        page.count += out.count;
        if out.searched {
            page.searched += 1;
        } else {
            page.skipped += 1;
        }
    }

    /// The answer: `output`, `count`, and the full profile's
    /// `files_searched`, `files_skipped` (with the walk's `walk_skipped`)
    /// and, when the page cut the entries, `next_offset`.
    pub(super) fn answer(self, walk_skipped: i64) -> Vec<(&'static str, Field)> {
        let page = self.page.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut next = page.offset.saturating_add(page.head_limit);
        let mut cut = page.head_limit > 0 && page.seen > next;
        // The limit cuts the page before head_limit would (it keeps none
        // of the entries past it).
        if let Some(at) = page.cut_at {
            (next, cut) = (at, true);
        }
        let mut output = if page.paged {
            page.output.finish_parts_with(|c| {
                // An entry longer than the whole page is shown cut: paging
                // on from it would show the same again.
                if c.head_inside {
                    next += 1;
                }
                marker::page_on(c.omitted, next)
            })
        } else {
            page.output.finish_parts_with(|c| marker::narrow(c, marker::NARROW_GREP))
        };
        // Each entry ends with a newline; the last one does not need it.
        limit::strip_final_newline(&mut output);
        let mut answer = vec![
            ("output", Field::Parts(output)),
            ("count", Field::Int(page.count)),
            ("files_searched", Field::Int(page.searched)),
            ("files_skipped", Field::Int(page.skipped + walk_skipped)),
        ];
        if cut {
            answer.push(("next_offset", Field::Int(i64::try_from(next).unwrap_or(i64::MAX))));
        }
        answer
    }
}

impl Page {
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
            let held = self.output.head().len();
            self.output.push(buf);
            if self.paged && self.cut_at.is_none() && self.output.omitted() > 0 {
                // The first entry the head did not take whole.
                let taken = self.output.head().len().saturating_sub(held).min(buf.len());
                let whole = memchr::memchr_iter(b'\n', &buf[..taken]).count() as u64;
                self.cut_at = Some(self.seen + whole);
            }
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
            if self.paged && self.cut_at.is_none() && self.output.omitted() > 0 {
                self.cut_at = Some(index);
            }
        }
    }
}

/// What one file gave: the entries not yet handed over, and its numbers.
#[derive(Default)]
pub(super) struct FileOut {
    pub(super) buf: Vec<u8>,
    /// Some entries were handed over to the printer already.
    handed: bool,
    pub(super) count: i64,
    /// Searched (neither binary nor unreadable).
    searched: bool,
}

/// Where a file's entries end up, for a search that holds too many of
/// them: the printer, once the file's turn has come.
pub(super) struct InTurn<'a> {
    pub(super) printer: &'a Printer,
    pub(super) turn: &'a Turn<'a>,
}

/// Collects one file's entries, as a `Sink` of ripgrep's searcher.
pub(super) struct Entries<'a> {
    path: &'a [u8],
    /// The file searched (read again from its start by `has_nul`).
    file: &'a File,
    mode: Mode,
    out: FileOut,
    /// Matching lines.
    lines: i64,
    binary: bool,
    /// The file is known to hold no NUL (it was read whole and checked).
    known_text: bool,
    multiline: bool,
    /// Where entries go once they are too many to hold; `None` (tests):
    /// all are held until the end.
    in_turn: Option<&'a InTurn<'a>>,
}

impl<'a> Entries<'a> {
    /// The entries of the file at `path`, opened as `file`, as `request`
    /// asks for them; handed over as `in_turn` says when it is given.
    pub(super) fn new(
        path: &'a [u8],
        file: &'a File,
        request: &Request<'_>,
        known_text: bool,
        in_turn: Option<&'a InTurn<'a>>,
    ) -> Entries<'a> {
        Entries {
            path,
            file,
            mode: request.mode,
            out: FileOut { searched: true, ..FileOut::default() },
            lines: 0,
            binary: false,
            known_text,
            multiline: request.multiline,
            in_turn,
        }
    }

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
    /// over; false when the file turns out to be binary instead (entries
    /// handed over cannot be taken back, so a file searched as a stream is
    /// checked for a NUL first).
    fn bounded(&mut self) -> bool {
        let Some(in_turn) = self.in_turn else { return true };
        if self.out.buf.len() <= HOLD_AHEAD {
            return true;
        }
        if !self.is_text() {
            return false;
        }
        in_turn.turn.wait();
        in_turn.printer.lock().entries(&self.out.buf, !self.out.handed);
        self.out.handed = true;
        self.out.buf.clear();
        true
    }

    /// What the file gave: nothing, and counted as skipped, when binary.
    pub(super) fn finish(mut self) -> FileOut {
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
