//! How grep's answer is printed: `PATH:LINE: TEXT`, a line for each
//! matching line, the files in order, within the output limit.
//!
//! The lines held stay bounded by the output limit, whatever the files hold
//! (docs/SPEC.md, "Output limit"): a file searched ahead of the files
//! before it holds at most `HOLD_AHEAD` bytes of lines; past that it waits
//! for its turn and hands its lines over to the answer, as it does from
//! then on. A matching line is formatted whole first (`Lines::line`): with
//! the searcher's buffer, a thread may hold the longest line twice, up to
//! 512 MiB (docs/TOOLS.md, grep).

use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, MutexGuard, PoisonError};

use grep_searcher::{Searcher, Sink, SinkMatch};

use super::ordered::Turn;
use super::search::has_nul;
use crate::limit::{self, Bounded};

/// The bytes of lines a file's search holds while files before it are
/// still being searched; past it, it waits for them and hands its lines
/// over to the answer.
pub(super) const HOLD_AHEAD: usize = 1024 * 1024;

/// The answer being printed, the files' lines in the files' order.
pub(super) struct Answer {
    output: Mutex<Bounded>,
    limit: Option<usize>,
}

impl Answer {
    pub(super) fn new(limit: Option<usize>) -> Answer {
        Answer { output: Mutex::new(Bounded::for_answer(limit)), limit }
    }

    /// The output limit, for the lines a file holds before they are added.
    pub(super) fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Adds a file's lines, after those of the files before it.
    pub(super) fn append(&self, lines: Bounded) {
        lock(&self.output).append(lines);
    }

    /// The answer's `output`.
    pub(super) fn finish(self) -> Vec<Vec<u8>> {
        let output = self.output.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut output = output.finish_parts();
        // Each line ends with a newline; the last one does not need it.
        limit::strip_final_newline(&mut output);
        output
    }
}

fn lock(output: &Mutex<Bounded>) -> MutexGuard<'_, Bounded> {
    output.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a file's lines end up, for a search that holds too many of them:
/// the answer, once the file's turn has come.
pub(super) struct InTurn<'a> {
    pub(super) answer: &'a Answer,
    pub(super) turn: &'a Turn<'a>,
}

/// What one file gave.
pub(super) struct FileResult {
    pub(super) output: Bounded,
    pub(super) lines: i64,
}

/// Collects `PATH:LINE: TEXT\n` for each matching line of one file.
pub(super) struct Lines<'p> {
    path: &'p [u8],
    /// The file searched (read again from its start by `has_nul`).
    file: &'p File,
    limit: Option<usize>,
    output: Bounded,
    lines: i64,
    binary: bool,
    /// The line being formatted (reused).
    line: Vec<u8>,
    /// Where lines go once they are too many to hold.
    in_turn: Option<&'p InTurn<'p>>,
    /// The file is known to hold no NUL (it was read whole and checked).
    known_text: bool,
}

impl<'p> Lines<'p> {
    /// The lines of the file at `path`, opened as `file`, within `limit`;
    /// handed over to the answer as `in_turn` says when it is given.
    pub(super) fn new(
        path: &'p [u8],
        file: &'p File,
        limit: Option<usize>,
        in_turn: Option<&'p InTurn<'p>>,
        known_text: bool,
    ) -> Lines<'p> {
        Lines {
            path,
            file,
            limit,
            output: Bounded::for_answer(limit),
            lines: 0,
            binary: false,
            line: Vec::new(),
            in_turn,
            known_text,
        }
    }

    /// What the file gave: nothing for a binary file.
    pub(super) fn finish(self) -> FileResult {
        if self.binary {
            return FileResult { output: Bounded::for_answer(self.limit), lines: 0 };
        }
        FileResult { output: self.output, lines: self.lines }
    }

    /// Waits for the file's turn and hands the lines held over to the
    /// answer; false if the file turns out to be binary instead (lines
    /// handed over cannot be taken back, so a file searched as a stream is
    /// checked for a NUL first).
    fn hand_over(&mut self, in_turn: &InTurn<'_>) -> bool {
        if !self.known_text {
            if has_nul(self.file) {
                self.binary = true;
                return false;
            }
            self.known_text = true;
        }
        in_turn.turn.wait();
        let held = std::mem::replace(&mut self.output, Bounded::for_answer(self.limit));
        in_turn.answer.append(held);
        true
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
        if let Some(in_turn) = self.in_turn {
            if self.output.kept() > HOLD_AHEAD && !self.hand_over(in_turn) {
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
