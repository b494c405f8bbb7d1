//! The output limit (README, "Output limit"): `IKIGAI_TOOLS_MAX_OUTPUT`
//! bounds the whole answer a tool prints, error envelopes included, after JSON escaping, because that is what a
//! host reads. 16 MiB by default, 65,535 under the `-tool` names of current
//! ikigai releases (which read no more), `0` for none; less than 1 KiB
//! counts as 1 KiB.
//!
//! Past the limit the first and the last half of the output are kept and
//! one line between them says what was left out. Memory stays bounded by
//! the limit whatever is pushed: the middle is counted, not stored. Cuts
//! fall between characters (`json::size` units), never inside one.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::json::size::{self, Unit};

pub const ENV_VAR: &str = "IKIGAI_TOOLS_MAX_OUTPUT";
pub const DEFAULT_MAX_OUTPUT: usize = 16 * 1024 * 1024;
/// The default under the `-tool` names (`file-read-tool`): current ikigai
/// releases read at most this much of an answer and call anything longer
/// invalid JSON.
pub const IKIGAI_TOOL_MAX_OUTPUT: usize = 65_535;
/// Smaller limits count as this much: room for the envelope, the marker
/// and some output.
pub const MIN_MAX_OUTPUT: usize = 1024;
/// What an answer holds beside the output's head and tail, at most: the
/// envelope (`{"output":"","exit_code":-9223372036854775808}`, 46 bytes;
/// an error envelope `{"error":"","error_code":"PERMISSION_DENIED"}`, 45)
/// and the marker line with its two escaped newlines (file_read's, with
/// two 20-digit numbers, takes 90).
pub const ANSWER_RESERVE: usize = 160;

/// Whether the tool was called by a `-tool` name.
static CALLED_AS_IKIGAI_TOOL: AtomicBool = AtomicBool::new(false);

/// Tells the limit the name the tool was called by (the file name of
/// `argv[0]`, or the tool named after `ikigai-tools`): under a `-tool` or
/// `_tool` name the default is what current ikigai reads.
pub fn called_as(name: &str) {
    let ikigai = name.ends_with("-tool") || name.ends_with("_tool");
    CALLED_AS_IKIGAI_TOOL.store(ikigai, Ordering::Relaxed);
}

fn default_max_output() -> usize {
    if CALLED_AS_IKIGAI_TOOL.load(Ordering::Relaxed) {
        IKIGAI_TOOL_MAX_OUTPUT
    } else {
        DEFAULT_MAX_OUTPUT
    }
}

/// The limit in force on an answer's size: `None` when there is none. A
/// value that is not a number is ignored in favour of the default rather
/// than lifting the bound.
pub fn max_output() -> Option<usize> {
    parse_limit(std::env::var(ENV_VAR).ok().as_deref(), default_max_output())
}

fn parse_limit(value: Option<&str>, default: usize) -> Option<usize> {
    match value.map(str::trim).map(str::parse::<u64>) {
        Some(Ok(0)) => None,
        Some(Ok(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX).max(MIN_MAX_OUTPUT)),
        _ => Some(default),
    }
}

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
            out_of_memory: false,
        }
    }

    /// Keeps at most `limit` bytes (head and tail; the marker comes on top):
    /// what a host keeps of a tool's stdout and stderr.
    pub fn new(limit: Option<usize>) -> Bounded {
        Bounded::with(Measure::Bytes, limit)
    }

    /// For a tool's `output`: the whole answer, escaped, envelope and
    /// marker included, stays within `limit` (README, "Output limit").
    pub fn for_answer(limit: Option<usize>) -> Bounded {
        let budget = limit.map(|l| l.saturating_sub(ANSWER_RESERVE).max(2));
        Bounded::with(Measure::Answer, budget)
    }

    /// For a tool's `output`, with the limit in force.
    pub fn from_env() -> Bounded {
        Bounded::for_answer(max_output())
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
        self.budget.map_or(usize::MAX, |b| b - b / 2)
    }

    fn tail_cap(&self) -> usize {
        self.budget.map_or(0, |b| b / 2)
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.budget.is_none() {
            self.keep_all(bytes);
            return;
        }
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
    fn push_units(&mut self, units: &[u8], size: usize) {
        if self.budget.is_none() || self.pending_len > 0 || self.resync > 0 {
            self.push(units);
            return;
        }
        self.total += units.len() as u64;
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
        if body.is_empty() || cap == 0 {
            return;
        }
        if body.len() > cap {
            // Every byte takes at least one: no more than the last `cap`
            // bytes can stay, and nothing from before them.
            body = &body[size::boundary_at_or_after(body, body.len() - cap)..];
            self.tail.clear();
            self.tail_size = 0;
            known = None;
        }
        let mut size = known.unwrap_or_else(|| self.size_of(body));
        if size > cap {
            let (at, freed) = self.leading_units(body, size - cap);
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
        self.tail.drain(..n.min(self.tail.len()));
        self.tail_size -= freed.min(self.tail_size);
    }

    /// The shortest run of whole units that starts `bytes` and takes at
    /// least `need` (or all of `bytes`): its length, and what it takes.
    /// Blocks of ASCII are measured at once, not byte by byte.
    fn leading_units(&self, bytes: &[u8], need: usize) -> (usize, usize) {
        let (mut n, mut taken) = (0, 0);
        let mut bulk_from = 0;
        while taken < need && n < bytes.len() {
            // A block takes at least BLOCK: worth measuring only if the end
            // may lie past it.
            if n >= bulk_from && n + BLOCK <= bytes.len() && need - taken > BLOCK {
                let block = &bytes[n..n + BLOCK];
                if block.is_ascii() {
                    let size = self.ascii_size_of(block);
                    if taken + size < need {
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
            n += unit.len;
            taken += self.unit_size(unit);
        }
        (n, taken)
    }

    /// The longest run of whole units that starts `bytes` and takes at most
    /// `room`: its length, and what it takes.
    fn units_within(&self, bytes: &[u8], room: usize) -> (usize, usize) {
        let (mut n, mut taken) = (0, 0);
        let mut bulk_from = 0;
        while n < bytes.len() {
            if n >= bulk_from && n + BLOCK <= bytes.len() && room - taken >= BLOCK {
                let block = &bytes[n..n + BLOCK];
                if block.is_ascii() {
                    let size = self.ascii_size_of(block);
                    if taken + size <= room {
                        taken += size;
                        n += BLOCK;
                        continue;
                    }
                    bulk_from = usize::MAX;
                } else {
                    bulk_from = n + BLOCK;
                }
            }
            let unit = size::unit(&bytes[n..]);
            let size = self.unit_size(unit);
            if taken + size > room {
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
        // Nothing after an omission may join the head (which may have
        // ended a few bytes short, not to cut a character).
        self.head_full = true;
        // What was kept of the tail, or begun, no longer ends the output.
        self.tail.clear();
        self.tail_size = 0;
        self.pending_len = 0;
        self.resync = 3;
    }

    /// Counts `n` bytes as left out between what was pushed and what comes
    /// next, which starts a character.
    fn omit(&mut self, n: u64) {
        self.flush_pending();
        self.total += n;
        self.head_full = true;
        self.tail.clear();
        self.tail_size = 0;
    }

    /// Appends what another `Bounded` of the same kind collected, as if
    /// its bytes had been pushed here one by one (grep collects each file
    /// apart, in parallel, and stitches them together in order).
    pub fn append(&mut self, mut other: Bounded) {
        debug_assert_eq!((self.measure, self.budget), (other.measure, other.budget));
        let omitted = other.omitted();
        self.out_of_memory |= other.out_of_memory;
        // Head and tail are whole units, measured already.
        self.push_units(&other.head, other.head_size);
        if omitted > 0 {
            // `other` overflowed, so its head filled ours and its tail is
            // the whole of what our tail must keep.
            self.omit(omitted);
        }
        self.push_units(other.tail.make_contiguous(), other.tail_size);
        self.push(&other.pending[..other.pending_len]);
    }

    /// Bytes pushed in all.
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

    /// The output with the standard marker where bytes were left out.
    pub fn finish(self) -> Vec<u8> {
        self.finish_parts().concat()
    }

    /// The output with a marker of the caller's making (file_read says
    /// where to continue). The marker stands on a line of its own.
    pub fn finish_with(self, marker: impl FnOnce(u64) -> String) -> Vec<u8> {
        self.finish_parts_with(marker).concat()
    }

    /// The output as parts that follow one another (head, marker line,
    /// tail), written one after the other into the answer
    /// (`json::Field::Parts`): joining them would hold the output twice.
    /// Each part starts and ends between characters.
    pub fn finish_parts(self) -> Vec<Vec<u8>> {
        self.finish_parts_with(|omitted| format!("[... {omitted} bytes omitted ...]"))
    }

    /// `finish_parts` with a marker of the caller's making.
    pub fn finish_parts_with(mut self, marker: impl FnOnce(u64) -> String) -> Vec<Vec<u8>> {
        self.flush_pending();
        let omitted = self.omitted();
        let mut line = Vec::new();
        if omitted > 0 {
            if !self.head.ends_with(b"\n") {
                line.push(b'\n');
            }
            line.extend_from_slice(marker(omitted).as_bytes());
            // The marker ends its line, unless the tail starts with the
            // newline that does (no blank line after the marker).
            if self.tail.front() != Some(&b'\n') {
                line.push(b'\n');
            }
        }
        // In place: the deque's ring is rotated, not copied.
        vec![self.head, line, Vec::from(self.tail)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values() {
        let d = DEFAULT_MAX_OUTPUT;
        assert_eq!(parse_limit(None, d), Some(DEFAULT_MAX_OUTPUT));
        assert_eq!(parse_limit(Some("0"), d), None);
        assert_eq!(parse_limit(Some("100000"), d), Some(100_000));
        assert_eq!(parse_limit(Some("100"), d), Some(MIN_MAX_OUTPUT), "less than 1 KiB is 1 KiB");
        assert_eq!(parse_limit(Some("lots"), d), Some(DEFAULT_MAX_OUTPUT));
        assert_eq!(parse_limit(None, IKIGAI_TOOL_MAX_OUTPUT), Some(65_535));
    }

    #[test]
    fn under_the_limit_everything_is_kept() {
        let mut b = Bounded::new(Some(10));
        b.push(b"hello");
        b.push(b"world");
        assert_eq!(b.finish(), b"helloworld");
    }

    #[test]
    fn past_the_limit_head_and_tail_are_kept() {
        let mut b = Bounded::new(Some(10));
        for chunk in [&b"0123"[..], b"4567", b"89ab", b"cdef"] {
            b.push(chunk);
        }
        assert_eq!(b.omitted(), 6);
        assert_eq!(b.finish(), b"01234\n[... 6 bytes omitted ...]\nbcdef");
    }

    #[test]
    fn a_tail_starting_with_a_newline_gives_no_blank_line() {
        let mut b = Bounded::new(Some(6));
        b.push(b"ab\ncdefg\nhi");
        assert_eq!(b.finish(), b"ab\n[... 5 bytes omitted ...]\nhi");
    }

    #[test]
    fn a_character_is_never_cut_between_head_and_tail() {
        // "é" is two bytes; the head's room ends between them.
        for chunks in
            [vec![&b"abc\xc3\xa9de"[..]], vec![b"abc\xc3", b"\xa9de"], vec![b"abc", b"\xc3\xa9de"]]
        {
            let mut b = Bounded::new(Some(8));
            for c in &chunks {
                b.push(c);
            }
            let parts = b.finish_parts();
            assert_eq!(parts, [b"abc".to_vec(), vec![], "éde".as_bytes().to_vec()], "{chunks:?}");
        }
    }

    #[test]
    fn incomplete_characters_are_found_at_the_end() {
        assert_eq!(incomplete_end(b"ab"), 0);
        assert_eq!(incomplete_end("aé".as_bytes()), 0);
        assert_eq!(incomplete_end(b"a\xc3"), 1);
        assert_eq!(incomplete_end(b"a\xe2\x9c"), 2);
        assert_eq!(incomplete_end(b"a\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_end(b"\x80\x80\x80"), 0);
    }

    #[test]
    fn the_final_newline_is_stripped_from_the_last_part_that_has_bytes() {
        let mut parts = vec![b"a\n".to_vec(), vec![], vec![]];
        assert!(strip_final_newline(&mut parts));
        assert_eq!(parts, [b"a".to_vec(), vec![], vec![]]);
        assert!(!strip_final_newline(&mut parts));
    }

    #[test]
    fn the_tail_is_allocated_once_at_its_size() {
        let mut b = Bounded::new(Some(1 << 20));
        for _ in 0..10_000 {
            b.push(&[b'y'; 1000]);
        }
        assert!(b.tail.capacity() < (1 << 19) + 64, "{}", b.tail.capacity());
    }

    #[test]
    fn one_huge_push_keeps_its_own_tail() {
        let mut b = Bounded::new(Some(4));
        b.push(b"abcdefghij");
        assert_eq!(b.finish(), b"ab\n[... 6 bytes omitted ...]\nij");
    }

    #[test]
    fn skipping_the_middle_gives_what_pushing_it_would() {
        let mut pushed = Bounded::new(Some(4));
        pushed.push(b"abcdefghij");
        let mut skipped = Bounded::new(Some(4));
        skipped.push(b"ab");
        assert_eq!(skipped.skippable(8), 6);
        skipped.skip(6);
        skipped.push(b"ij");
        assert_eq!(skipped.finish(), pushed.finish());
        assert_eq!(Bounded::new(Some(4)).skippable(100), 0, "head not full yet");
        assert_eq!(Bounded::new(None).skippable(100), 0, "no limit");
    }

    #[test]
    fn append_equals_pushing_everything() {
        let ascii: [&[u8]; 5] = [b"0123", b"456789abcdef", b"", b"gh", b"ijklmnopqrstuvwxyz"];
        // Characters that a head may not end inside, so that it ends short.
        let utf8: [&[u8]; 5] = [
            "0é2".as_bytes(),
            "45✓789ab".as_bytes(),
            b"",
            "gé".as_bytes(),
            "ij✓lmnopqrstu".as_bytes(),
        ];
        // Escapes, for the answer's measure.
        let escapes: [&[u8]; 5] = [b"0\n2", b"45\t78\"ab", b"", b"g\x01", b"ij\\lmn\nopqrstu"];
        let limits = [None, Some(1), Some(5), Some(10), Some(16), Some(100)];
        type Make = fn(Option<usize>) -> Bounded;
        let kinds: [(Make, usize); 2] = [(Bounded::new, 0), (Bounded::for_answer, ANSWER_RESERVE)];
        for (chunks, limit, (make, reserve)) in [ascii, utf8, escapes]
            .into_iter()
            .flat_map(|c| limits.map(|l| (c, l)))
            .flat_map(|(c, l)| kinds.map(|k| (c, l, k)))
        {
            let limit = limit.map(|l| l + reserve);
            for split in 0..=chunks.len() {
                let mut whole = make(limit);
                for c in chunks {
                    whole.push(c);
                }
                let mut stitched = make(limit);
                for part in [&chunks[..split], &chunks[split..]] {
                    let mut piece = make(limit);
                    for c in part {
                        piece.push(c);
                    }
                    stitched.append(piece);
                }
                assert_eq!(stitched.total(), whole.total());
                assert_eq!(stitched.finish(), whole.finish(), "{limit:?} {split} {reserve}");
            }
        }
    }

    /// The answer a tool prints with `parts` as its output: the widest
    /// envelope there is (bash's, with the longest exit code).
    fn answer_len(parts: &[Vec<u8>]) -> usize {
        use crate::json::{write_object, Field};
        let mut out = Vec::new();
        write_object(
            &mut out,
            &[("output", Field::Parts(parts.to_vec())), ("exit_code", Field::Int(i64::MIN))],
        )
        .unwrap();
        assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
        out.len()
    }

    /// Bytes of every kind, from a seed: text to escape or not, characters
    /// of each length, bytes that are no UTF-8.
    fn mixed(seed: u64, len: usize) -> Vec<u8> {
        let pieces: [&[u8]; 12] = [
            b"line of text ",
            b"\n",
            b"\"q\\",
            b"\x00\x01",
            "é".as_bytes(),
            "✓".as_bytes(),
            "𝄞".as_bytes(),
            b"\xff",
            b"\xe2\x9c",
            b"\x80",
            b"\t",
            b"abcdefgh",
        ];
        crate::json::size::mixed_of(&pieces, seed, len)
    }

    #[test]
    fn the_answer_never_passes_the_limit_escaping_included() {
        for seed in 0..40u64 {
            let text = mixed(seed, 3000 + seed as usize * 97);
            for limit in [1024, 1500, 4096] {
                let mut b = Bounded::for_answer(Some(limit));
                let chunk = 1 + seed as usize * 13 % 700;
                for piece in text.chunks(chunk) {
                    b.push(piece);
                }
                assert_eq!(b.total(), text.len() as u64);
                let mut omitted = 0;
                let parts = b.finish_parts_with(|n| {
                    omitted = n;
                    format!("[... {n} bytes omitted ...]")
                });
                let len = answer_len(&parts);
                assert!(len <= limit, "{len} > {limit} (seed {seed})");
                let written = crate::json::size::escaped_len(&text) + 46;
                if written > limit {
                    assert!(omitted > 0);
                    // Full up to a character or two on either side.
                    assert!(len + ANSWER_RESERVE >= limit, "{len} (seed {seed})");
                } else {
                    assert_eq!(parts.concat(), text, "fits whole (seed {seed})");
                }
                // Head and tail are the text's own first and last bytes.
                assert!(text.starts_with(&parts[0]), "head (seed {seed}, {limit})");
                assert!(text.ends_with(&parts[2]), "tail (seed {seed}, {limit})");
                assert_eq!(omitted, (text.len() - parts[0].len() - parts[2].len()) as u64);
            }
        }
    }

    #[test]
    fn how_the_output_is_pushed_changes_nothing() {
        // Mostly ASCII (measured a block at a time), with stretches of
        // everything else, in large amounts.
        let mut text = Vec::new();
        for i in 0..30u64 {
            let plain = "plain ascii text, line after line\n".repeat(1 + (i as usize * 37) % 120);
            text.extend_from_slice(plain.as_bytes());
            text.extend_from_slice(&mixed(i, 1 + (i as usize * 53) % 900));
        }
        for limit in [5000, 20_000, 100_000] {
            let pushed = |chunk: usize| {
                let mut b = Bounded::for_answer(Some(limit));
                for piece in text.chunks(chunk) {
                    b.push(piece);
                }
                b.finish_parts()
            };
            let one_by_one = pushed(1);
            assert!(answer_len(&one_by_one) <= limit);
            for chunk in [3, 4096, 4097, 65_536, text.len()] {
                assert_eq!(pushed(chunk), one_by_one, "limit {limit}, chunks of {chunk}");
            }
        }
    }

    #[test]
    fn the_reserve_holds_the_widest_envelope_and_marker() {
        let marker =
            format!("[... {} bytes omitted; continue with offset={} ...]", u64::MAX, u64::MAX);
        let parts = vec![b"x".to_vec(), format!("\n{marker}\n").into_bytes(), b"y".to_vec()];
        assert!(answer_len(&parts) - 2 <= ANSWER_RESERVE, "{}", answer_len(&parts));
    }

    #[test]
    fn a_cut_never_leaves_a_replacement_character_at_either_edge() {
        let text = "aé✓𝄞b".repeat(40);
        let bytes = text.as_bytes();
        for limit in [1024, 1100] {
            for measure in [Measure::Bytes, Measure::Answer] {
                for cut in 0..=bytes.len() {
                    let budget =
                        if measure == Measure::Bytes { limit - ANSWER_RESERVE } else { limit };
                    let mut b = match measure {
                        Measure::Bytes => Bounded::new(Some(budget / 4)),
                        Measure::Answer => Bounded::for_answer(Some(limit)),
                    };
                    let mut b2 = Bounded::new(Some(budget / 4 + 1));
                    b.push(&bytes[..cut]);
                    b.push(&bytes[cut..]);
                    b2.push(&bytes[..cut]);
                    b2.push(&bytes[cut..]);
                    for parts in [b.finish_parts(), b2.finish_parts()] {
                        for part in &parts {
                            assert!(std::str::from_utf8(part).is_ok(), "cut at {cut}: {part:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn reading_on_after_a_skip_inside_a_character_leaves_no_replacement_character() {
        let text = "✓𝄞é".repeat(1000);
        let bytes = text.as_bytes();
        for at in 1000..1012 {
            let mut b = Bounded::for_answer(Some(1024));
            b.push(&bytes[..at]);
            let skip = b.skippable((bytes.len() - at) as u64);
            assert!(skip > 0);
            b.skip(skip);
            let from = at + skip as usize;
            b.push(&bytes[from..from + 5]);
            b.push(&bytes[from + 5..]);
            assert_eq!(b.total(), bytes.len() as u64);
            let parts = b.finish_parts();
            let tail = std::str::from_utf8(&parts[2]).expect("whole characters");
            assert!(text.ends_with(tail) && !tail.is_empty());
        }
    }

    #[test]
    fn without_memory_the_rest_is_counted_not_kept() {
        let mut b = Bounded::new(None);
        b.push(b"kept");
        b.out_of_memory = true;
        b.push(b"lost");
        assert!(b.out_of_memory());
        assert_eq!(b.omitted(), 4);
    }

    #[test]
    fn the_last_byte_is_the_tail_s_the_head_s_or_a_pending_one() {
        let mut b = Bounded::new(Some(4));
        assert_eq!(b.last_byte(), None);
        b.push(b"ab");
        assert_eq!(b.last_byte(), Some(b'b'));
        b.push(b"cdefg\n");
        assert_eq!(b.last_byte(), Some(b'\n'), "from the tail");
        b.push(b"\xc3");
        assert_eq!(b.last_byte(), Some(0xc3), "a character still pending");
    }

    #[test]
    fn no_limit_keeps_all() {
        let mut b = Bounded::new(None);
        b.push(&[7u8; 100_000]);
        assert_eq!(b.omitted(), 0);
        assert_eq!(b.finish().len(), 100_000);
    }
}
