//! The output limit's buffer (docs/SPEC.md, "Output limit"): the limit itself,
//! read from the environment and the name a tool was called by, is part of
//! a call's `Context`; the buffer keeps an answer within it, error
//! envelopes included, after JSON escaping, because that is what a host
//! reads.
//!
//! Past the limit the first and the last half of the output are kept and
//! one line between them says what was left out (`marker`). Memory stays
//! bounded by the limit whatever is pushed: the middle is counted, not
//! stored, its newlines too. Cuts fall between characters (`json::size`
//! units), never inside one, and then back to line boundaries: the head
//! ends after its last newline, the tail starts after its first, so that no
//! fragment of a line reads as a value (`cut_at_lines`); only a line that
//! fills most of the head or the tail is cut inside, and the marker says so.

use std::collections::VecDeque;
use std::io::{self, Write};

use crate::json::size::{self, Unit};
use crate::json::{self, Field};

#[path = "limit_marker.rs"]
pub mod marker;

pub use marker::Cut;

/// The output limit when the environment names none and the tool's name asks
/// for no other (`context::max_output`): 16 MiB. Here, below the call's
/// context, because what keeps output (`jobs`) is bounded by it too.
pub const DEFAULT_MAX_OUTPUT: usize = 16 * 1024 * 1024;

/// What an answer holds beside the output's head and tail, at most: the
/// envelope (`{"output":"","exit_code":-9223372036854775808}`, 46 bytes;
/// an error envelope `{"error":"","error_code":"PERMISSION_DENIED"}`, 45)
/// and the marker line with its two escaped newlines (the longest,
/// `marker::not_kept` with every number of 20 digits, takes 312).
pub const ANSWER_RESERVE: usize = 400;

/// Text is measured a block at a time where it is ASCII.
const BLOCK: usize = 4096;

/// What a `Bounded` counts against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// The bytes themselves (what a host captures of a tool's streams).
    Bytes,
    /// Their size in a JSON string (a tool's `output`).
    Answer,
}

/// Collects output up to a limit, keeping its head and its tail.
#[derive(Debug)]
pub struct Bounded {
    measure: Measure,
    /// What head and tail may take together; `None`: everything is kept.
    budget: Option<usize>,
    head: Vec<u8>,
    /// What the head takes (bytes, or its size in the answer).
    head_size: usize,
    /// Whether the head is complete: nothing more joins it (the next
    /// character did not fit, or something was left out).
    head_full: bool,
    tail: VecDeque<u8>,
    tail_size: usize,
    /// The start of a character whose other bytes have not come yet.
    pending: [u8; 3],
    pending_len: usize,
    /// After `skip`: how many continuation bytes that open what comes next
    /// are the rest of a character left out, and are left out too.
    resync: usize,
    /// Bytes pushed in all (skipped ones included).
    total: u64,
    /// Newlines pushed in all; `None` once bytes were skipped unseen.
    newlines: Option<u64>,
    /// The last byte left out before the tail (`None`: none, or not seen):
    /// a newline there starts the tail on a line.
    before_tail: Option<u8>,
    /// Only the head is kept: what follows it is left out (a page that a
    /// next call continues, grep's `next_offset`).
    head_only: bool,
    out_of_memory: bool,
}

impl Bounded {
    fn with(measure: Measure, budget: Option<usize>) -> Bounded {
        Bounded {
            measure,
            budget,
            head: Vec::new(),
            head_size: 0,
            head_full: false,
            tail: VecDeque::new(),
            tail_size: 0,
            pending: [0; 3],
            pending_len: 0,
            resync: 0,
            total: 0,
            newlines: Some(0),
            before_tail: None,
            head_only: false,
            out_of_memory: false,
        }
    }

    /// Keeps at most `limit` bytes (head and tail; the marker comes on top):
    /// what a host keeps of a tool's stdout and stderr.
    pub fn new(limit: Option<usize>) -> Bounded {
        Bounded::with(Measure::Bytes, limit)
    }

    /// For a tool's `output`: the whole answer, escaped, envelope and
    /// marker included, stays within `limit` (docs/SPEC.md, "Output limit").
    /// A tool's `limit` comes from its call's context
    /// (`Context::answer_limit`), which takes off the reserve of its fields.
    pub fn for_answer(limit: Option<usize>) -> Bounded {
        let budget = limit.map(|l| l.saturating_sub(ANSWER_RESERVE).max(2));
        Bounded::with(Measure::Answer, budget)
    }

    /// `for_answer`, keeping only what fits from the start: whole lines of
    /// it (a page of entries, which an offset continues).
    pub fn for_answer_from_start(limit: Option<usize>) -> Bounded {
        Bounded { head_only: true, ..Bounded::for_answer(limit) }
    }

    /// What the output may take in all (head and tail), in the measure of
    /// this buffer; `None` without a limit.
    pub fn budget(&self) -> Option<usize> {
        self.budget
    }

    /// What `bytes` take against the budget, written as they are.
    pub fn size_of(&self, bytes: &[u8]) -> usize {
        match self.measure {
            Measure::Bytes => bytes.len(),
            Measure::Answer => size::escaped_len(bytes),
        }
    }

    /// `size_of` for ASCII, which needs no decoding.
    fn ascii_size_of(&self, ascii: &[u8]) -> usize {
        match self.measure {
            Measure::Bytes => ascii.len(),
            Measure::Answer => ascii.len() + size::escape_extra(ascii),
        }
    }

    fn unit_size(&self, unit: Unit) -> usize {
        match self.measure {
            Measure::Bytes => unit.len,
            Measure::Answer => unit.size,
        }
    }

    fn head_cap(&self) -> usize {
        match self.budget {
            Some(b) if self.head_only => b,
            Some(b) => b - b / 2,
            None => usize::MAX,
        }
    }

    fn tail_cap(&self) -> usize {
        match self.budget {
            Some(_) if self.head_only => 0,
            Some(b) => b / 2,
            None => 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.budget.is_none() {
            self.keep_all(bytes);
            return;
        }
        self.count_newlines(bytes);
        let mut bytes = bytes;
        if self.resync > 0 {
            let stray =
                bytes.iter().take(self.resync).take_while(|&&b| size::is_continuation(b)).count();
            bytes = &bytes[stray..];
            self.resync = if bytes.is_empty() { self.resync - stray } else { 0 };
        }
        if self.pending_len > 0 {
            bytes = self.complete_pending(bytes);
            if self.pending_len > 0 {
                return; // still incomplete: `bytes` went into it
            }
        }
        let held = incomplete_end(bytes);
        let (body, rest) = bytes.split_at(bytes.len() - held);
        self.accept(body, None);
        self.pending[..held].copy_from_slice(rest);
        self.pending_len = held;
    }

    /// Counts the newlines of what is pushed, to name the lines a cut left
    /// out (a pass at memchr's speed, nothing stored).
    fn count_newlines(&mut self, bytes: &[u8]) {
        if let Some(n) = &mut self.newlines {
            *n += memchr::memchr_iter(b'\n', bytes).count() as u64;
        }
    }

    /// Without a limit: everything is kept, as long as memory lasts; what
    /// it cannot hold is counted as left out, and said (`out_of_memory`).
    fn keep_all(&mut self, bytes: &[u8]) {
        if self.out_of_memory || self.head.try_reserve(bytes.len()).is_err() {
            self.out_of_memory = true;
            self.head_full = true;
            return;
        }
        self.head.extend_from_slice(bytes);
    }

    /// Completes the pending character with the first bytes of `bytes`
    /// and takes it in; the bytes that remain.
    fn complete_pending<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        let have = self.pending_len;
        let mut joined = [0u8; 4];
        joined[..have].copy_from_slice(&self.pending[..have]);
        let take = (4 - have).min(bytes.len());
        joined[have..have + take].copy_from_slice(&bytes[..take]);
        let unit = size::unit(&joined[..have + take]);
        if !unit.complete {
            // Still cut short (and so at most three bytes).
            self.pending[..have + take].copy_from_slice(&joined[..have + take]);
            self.pending_len = have + take;
            return &[];
        }
        self.pending_len = 0;
        self.accept(&joined[..unit.len], None);
        &bytes[unit.len.saturating_sub(have)..]
    }

    /// Pushes whole units whose size is known (what another `Bounded`
    /// measured), as `push` would, without measuring them again.
    #[cfg(test)]
    fn push_units(&mut self, units: &[u8], size: usize) {
        if self.budget.is_none() || self.pending_len > 0 || self.resync > 0 {
            self.push(units);
            return;
        }
        self.total += units.len() as u64;
        self.count_newlines(units);
        self.accept(units, Some(size));
    }

    /// Takes in whole units (of the size given, if known): the head while
    /// it has room, then the tail.
    fn accept(&mut self, mut body: &[u8], mut known: Option<usize>) {
        if body.is_empty() {
            return;
        }
        if !self.head_full {
            let room = self.head_cap() - self.head_size;
            let size = match known {
                Some(size) => size,
                None if body.len() <= room => self.size_of(body),
                None => usize::MAX,
            };
            if size <= room {
                self.extend_head(body, size);
                return;
            }
            // The units that fit; the first that does not ends the head.
            let (at, taken) = self.units_within(body, room);
            self.extend_head(&body[..at], taken);
            self.head_full = true;
            body = &body[at..];
            known = known.map(|size| size - taken);
        }
        self.push_tail(body, known);
    }

    fn extend_head(&mut self, bytes: &[u8], size: usize) {
        if self.head.try_reserve(bytes.len()).is_err() {
            self.out_of_memory = true;
            self.head_full = true;
            return;
        }
        self.head.extend_from_slice(bytes);
        self.head_size += size;
    }

    /// Takes whole units into the tail, dropping its oldest units to make
    /// room.
    fn push_tail(&mut self, mut body: &[u8], mut known: Option<usize>) {
        let cap = self.tail_cap();
        if body.is_empty() {
            return;
        }
        if cap == 0 {
            // A page keeps no tail: what it would follow is the output's
            // last byte, which says whether the last line left out ends.
            self.before_tail = body.last().copied();
            return;
        }
        if body.len() > cap {
            // Every byte takes at least one: no more than the last `cap`
            // bytes can stay, and nothing from before them.
            let at = size::boundary_at_or_after(body, body.len() - cap);
            self.before_tail = at.checked_sub(1).map(|i| body[i]).or(self.before_tail);
            body = &body[at..];
            self.tail.clear();
            self.tail_size = 0;
            known = None;
        }
        let mut size = known.unwrap_or_else(|| self.size_of(body));
        if size > cap {
            let (at, freed) = self.leading_units(body, size - cap);
            self.before_tail = at.checked_sub(1).map(|i| body[i]).or(self.before_tail);
            body = &body[at..];
            size -= freed;
            self.tail.clear();
            self.tail_size = 0;
        }
        let need = (self.tail_size + size).saturating_sub(cap);
        if need > 0 {
            self.drop_oldest(need);
        }
        if self.tail.capacity() < cap {
            // Once, and exactly: a deque left to grow by doubling can hold
            // twice what it keeps.
            if self.tail.try_reserve_exact(cap - self.tail.len()).is_err() {
                self.out_of_memory = true;
                return;
            }
        }
        self.tail.extend(body);
        self.tail_size += size;
    }

    /// Drops whole units from the front of the tail until at least `need`
    /// has been freed.
    fn drop_oldest(&mut self, need: usize) {
        let (a, b) = self.tail.as_slices();
        // The ring may wrap inside a character: that one is read across.
        let whole_a = if b.is_empty() { a.len() } else { a.len() - incomplete_end(a) };
        let (mut n, mut freed) = self.leading_units(&a[..whole_a], need);
        if freed < need && n < a.len() {
            let mut bytes = [0u8; 4];
            let have = (a.len() - n).min(4);
            bytes[..have].copy_from_slice(&a[n..n + have]);
            let more = (4 - have).min(b.len());
            bytes[have..have + more].copy_from_slice(&b[..more]);
            let unit = size::unit(&bytes[..have + more]);
            n += unit.len;
            freed += self.unit_size(unit);
        }
        if freed < need && n >= a.len() {
            let (m, f) = self.leading_units(&b[n - a.len()..], need - freed);
            n += m;
            freed += f;
        }
        let n = n.min(self.tail.len());
        if n > 0 {
            self.before_tail = self.tail.get(n - 1).copied();
        }
        self.tail.drain(..n);
        self.tail_size -= freed.min(self.tail_size);
    }

    /// The shortest run of whole units that starts `bytes` and takes at
    /// least `need` (or all of `bytes`): its length, and what it takes.
    fn leading_units(&self, bytes: &[u8], need: usize) -> (usize, usize) {
        self.units(bytes, need, Bound::AtLeast)
    }

    /// The longest run of whole units that starts `bytes` and takes at most
    /// `room`: its length, and what it takes.
    fn units_within(&self, bytes: &[u8], room: usize) -> (usize, usize) {
        self.units(bytes, room, Bound::AtMost)
    }

    /// The run of whole units that starts `bytes`, up to `bound` as `how`
    /// says: its length, and what it takes. Blocks of ASCII are measured at
    /// once, not byte by byte.
    fn units(&self, bytes: &[u8], bound: usize, how: Bound) -> (usize, usize) {
        // Whether `size` more may be taken with the end not yet reached.
        let short_of_end = |taken: usize, size: usize| match how {
            Bound::AtLeast => taken + size < bound,
            Bound::AtMost => taken + size <= bound,
        };
        let (mut n, mut taken) = (0, 0);
        let mut bulk_from = 0;
        while n < bytes.len() && (how == Bound::AtMost || taken < bound) {
            // A block takes at least BLOCK: worth measuring only if the end
            // may lie past it.
            if n >= bulk_from && n + BLOCK <= bytes.len() && bound - taken >= BLOCK {
                let block = &bytes[n..n + BLOCK];
                if block.is_ascii() {
                    let size = self.ascii_size_of(block);
                    if short_of_end(taken, size) {
                        taken += size;
                        n += BLOCK;
                        continue;
                    }
                    bulk_from = usize::MAX; // the end is in this block
                } else {
                    bulk_from = n + BLOCK;
                }
            }
            let unit = size::unit(&bytes[n..]);
            let size = self.unit_size(unit);
            // At most: a unit that would pass the bound is left out; at
            // least: the one that reaches it is taken.
            if how == Bound::AtMost && !short_of_end(taken, size) {
                break;
            }
            n += unit.len;
            taken += size;
        }
        (n, taken)
    }

    /// Takes in the pending start of a character as it is: nothing comes
    /// to complete it.
    fn flush_pending(&mut self) {
        let pending = self.pending;
        let len = std::mem::take(&mut self.pending_len);
        self.accept(&pending[..len], None);
    }

    /// How many of the next `remaining` bytes would be left out whatever
    /// they are: once the head is full, only the last half-limit of the rest
    /// is kept. A reader that knows what remains (a regular file of known
    /// size) may seek past them and call `skip`.
    pub fn skippable(&self, remaining: u64) -> u64 {
        if self.budget.is_none() || (!self.head_full && self.head_size < self.head_cap()) {
            return 0;
        }
        remaining.saturating_sub(self.tail_cap() as u64)
    }

    /// Counts `n` bytes as pushed and left out without seeing them (after
    /// `skippable` said they may be). What comes next may begin inside a
    /// character: the rest of it is left out as well.
    pub fn skip(&mut self, n: u64) {
        self.total += n;
        // Unseen: their lines, and what the tail follows, are not known.
        self.newlines = None;
        self.before_tail = None;
        // Nothing after an omission may join the head (which may have
        // ended a few bytes short, not to cut a character).
        self.head_full = true;
        // What was kept of the tail, or begun, no longer ends the output.
        self.tail.clear();
        self.tail_size = 0;
        self.pending_len = 0;
        self.resync = 3;
    }

    /// As `skip`, for a reader that knows how many newlines the `n` bytes
    /// held and their last byte (a job's store counts them as they are
    /// written): the marker can then still name the lines left out.
    pub fn skip_counted(&mut self, n: u64, newlines: u64, last: u8) {
        let before = self.newlines;
        self.skip(n);
        self.newlines = before.map(|b| b + newlines);
        self.before_tail = Some(last);
    }

    /// Counts `n` bytes (holding `newlines`, the last being `last`) as left
    /// out between what was pushed and what comes next, which starts a
    /// character.
    #[cfg(test)]
    fn omit(&mut self, n: u64, newlines: Option<u64>, last: Option<u8>) {
        self.flush_pending();
        self.total += n;
        self.newlines = self.newlines.zip(newlines).map(|(a, b)| a + b);
        self.before_tail = last;
        self.head_full = true;
        self.tail.clear();
        self.tail_size = 0;
    }

    /// Appends what another `Bounded` of the same kind collected, as if
    /// its bytes had been pushed here one by one (grep collects each file
    /// apart, in parallel, and stitches them together in order).
    #[cfg(test)]
    pub fn append(&mut self, mut other: Bounded) {
        debug_assert_eq!((self.measure, self.budget), (other.measure, other.budget));
        let omitted = other.omitted();
        self.out_of_memory |= other.out_of_memory;
        // Head and tail are whole units, measured already.
        self.push_units(&other.head, other.head_size);
        if omitted > 0 {
            // `other` overflowed, so its head filled ours and its tail is
            // the whole of what our tail must keep.
            let count = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
            let (a, b) = other.tail.as_slices();
            let kept = count(&other.head) + count(a) + count(b);
            let pending = count(&other.pending[..other.pending_len]);
            let newlines = other.newlines.map(|n| n - kept - pending);
            self.omit(omitted, newlines, other.before_tail);
        }
        self.push_units(other.tail.make_contiguous(), other.tail_size);
        self.push(&other.pending[..other.pending_len]);
    }

    /// Bytes pushed in all.
    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes kept (what the buffer holds in memory).
    pub fn kept(&self) -> usize {
        self.head.len() + self.tail.len() + self.pending_len
    }

    /// Bytes that were pushed but are not kept.
    pub fn omitted(&self) -> u64 {
        self.total - self.kept() as u64
    }

    /// Whether memory ran out: without a limit, what could not be held was
    /// left out (and counted in `omitted`).
    pub fn out_of_memory(&self) -> bool {
        self.out_of_memory
    }

    /// The last byte pushed and kept, if any (what a line added after the
    /// output follows).
    pub fn last_byte(&self) -> Option<u8> {
        if self.pending_len > 0 {
            return Some(self.pending[self.pending_len - 1]);
        }
        self.tail.back().or(self.head.last()).copied()
    }

    /// The kept head (the part before any omission).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// A message (an error's, a host's capture) with the plain marker,
    /// which names no lines, where bytes were left out.
    pub fn finish(self) -> Vec<u8> {
        self.finish_parts_with(marker::message).concat()
    }

    /// The output as parts that follow one another (head, marker line,
    /// tail), written one after the other into the answer
    /// (`json::Field::Parts`): joining them would hold the output twice.
    /// Each part starts and ends between characters.
    /// The marker is a message's, naming no lines: a tool's own output
    /// says how to get the rest with `finish_parts_with`.
    pub fn finish_parts(self) -> Vec<Vec<u8>> {
        self.finish_parts_with(marker::message)
    }

    /// `finish_parts` with a marker of the caller's making (`marker`: each
    /// tool says how to get the rest). The marker stands on a line of its
    /// own, and is made only if something was left out.
    pub fn finish_parts_with(mut self, marker: impl FnOnce(&Cut) -> String) -> Vec<Vec<u8>> {
        self.flush_pending();
        let mut line = Vec::new();
        if self.omitted() > 0 {
            let cut = match self.budget {
                Some(_) => self.cut_at_lines(),
                None => Cut::unplaced(self.omitted()),
            };
            if !self.head.ends_with(b"\n") {
                line.push(b'\n');
            }
            line.extend_from_slice(marker(&cut).as_bytes());
            // The marker ends its line, unless the tail starts with the
            // newline that does (no blank line after the marker).
            if self.tail.front() != Some(&b'\n') {
                line.push(b'\n');
            }
        }
        // In place: the deque's ring is rotated, not copied.
        vec![self.head, line, Vec::from(self.tail)]
    }

    /// Moves the cut to line boundaries (the bytes moved are left out too)
    /// and tells where it falls: the head ends after its last newline, the
    /// tail starts after its first, unless it starts a line already. A line
    /// that would take more than half of the head or the tail with it (one
    /// line of megabytes) is cut inside instead, and the marker says so:
    /// its ends say more than an empty answer. A page (`head_only`) keeps
    /// whole lines whenever it has one.
    fn cut_at_lines(&mut self) -> Cut {
        let head_inside = match memchr::memrchr(b'\n', &self.head) {
            Some(at) if self.head_only || 2 * (at + 1) >= self.head.len() => {
                self.head.truncate(at + 1);
                false
            }
            _ => !self.head.is_empty(),
        };
        let on_a_line = self.before_tail == Some(b'\n');
        let mut ends_a_line = on_a_line;
        let tail_inside = if on_a_line || self.tail.is_empty() {
            false
        } else {
            match self.tail.iter().position(|&b| b == b'\n') {
                Some(at) if at + 1 < self.tail.len() && 2 * (at + 1) <= self.tail.len() => {
                    self.tail.drain(..=at);
                    ends_a_line = true;
                    false
                }
                _ => true,
            }
        };
        let count = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
        let head_lines = count(&self.head);
        let (a, b) = self.tail.as_slices();
        let tail_lines = count(a) + count(b);
        // A byte at offset p is on line 1 + the newlines before it.
        let lines = self.newlines.map(|total| {
            let first = head_lines + 1;
            let before_tail = total.saturating_sub(tail_lines + u64::from(ends_a_line));
            (first, (before_tail + 1).max(first))
        });
        Cut {
            omitted: self.omitted(),
            head_lines,
            lines,
            head_inside,
            tail_inside,
            first_line: 1,
            noun: marker::LINES,
        }
    }
}

/// How many bytes at the end of `bytes` (which starts between characters)
/// are the start of a character whose other bytes are missing.
fn incomplete_end(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let start = bytes.len() - back;
        if size::is_continuation(bytes[start]) {
            continue;
        }
        return if size::unit(&bytes[start..]).complete { 0 } else { back };
    }
    0
}

/// Drops one final `\n` from output in parts (tools print lines, and the
/// last one needs no newline); whether there was one.
pub fn strip_final_newline(parts: &mut [Vec<u8>]) -> bool {
    match parts.iter_mut().rev().find(|p| !p.is_empty()) {
        Some(last) if last.ends_with(b"\n") => {
            last.pop();
            true
        }
        _ => false,
    }
}

/// A writer that counts what goes through it: the answer's writer
/// (`protocol::finish`) measures every answer as it writes it, at no
/// second pass over it.
pub struct Counting<W> {
    inner: W,
    written: usize,
}

impl<W: Write> Counting<W> {
    pub fn new(inner: W) -> Counting<W> {
        Counting { inner, written: 0 }
    }

    /// The bytes written so far.
    pub fn written(&self) -> usize {
        self.written
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The fields of an answer the output limit does not bound: an image, which
/// never becomes text and is answered whole or not at all (docs/MCP.md,
/// "Answers sized for the hosts").
const UNBOUNDED_FIELDS: [&str; 1] = ["image"];

/// What of `answer` the output limit does not bound ([`UNBOUNDED_FIELDS`]),
/// in bytes as written.
pub fn unbounded_len(answer: &[(&str, Field)]) -> usize {
    let unbounded = answer.iter().filter(|(key, _)| UNBOUNDED_FIELDS.contains(key));
    // Each as an object of its own: its braces stand for the comma before it.
    unbounded.map(|field| json::object_len(std::slice::from_ref(field))).sum()
}

/// The backstop of the output limit: what to tell (on stderr) when an
/// answer of `written` bytes, less what is not bounded ([`unbounded_len`]),
/// went over `limit`, which only a tool that got its reserve wrong can make
/// happen (docs/SPEC.md, "Output limit").
pub fn overrun(written: usize, limit: Option<usize>) -> Option<String> {
    let limit = limit.filter(|&l| written > l)?;
    Some(format!("the answer took {written} bytes, over the output limit of {limit}: a bug"))
}

/// How a run of units meets its bound (`Bounded::units`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// Up to the first unit that reaches it, that unit included.
    AtLeast,
    /// Every unit that fits within it.
    AtMost,
}

#[cfg(test)]
#[path = "limit_tests.rs"]
mod tests;
