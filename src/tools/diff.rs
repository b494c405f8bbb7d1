//! The unified diff of an edit (full profile, docs/TOOLS.md, "file_edit";
//! apply_patch's too):
//! `--- a/PATH`, `+++ b/PATH`, then hunks `@@ -l,n +l,n @@` with 3 lines
//! of context, as `diff -u` prints them (a count of 1 left out,
//! `\ No newline at end of file` after a last line without one).
//!
//! Made from what the edits did, not by searching the two texts for a
//! common subsequence: the bytes the new content copied from the old one
//! are unchanged (`Piece`), everything else changed. A change is
//! widened to whole lines, changes that share or touch a line are one, and the lines
//! at its edges that old and new still have in common are taken out (and,
//! for a change of at most `LCS_MAX` line pairs, those in its middle too).
//! Linear in the file, whatever the edits; memory: the change at hand and
//! the diff kept.
//!
//! Bounded: at most `MAX_LINES` lines and `MAX_BYTES` bytes are kept (a
//! line that would cross the bound is cut between characters), then one
//! line `[... N more diff lines omitted ...]`, N counting the lines of the
//! whole diff left out.

use memchr::{memchr, memrchr};

use crate::json::{self, Field};
use crate::limit::Bounded;
use crate::protocol::Answer;

/// A stretch of the new content: `len` bytes copied from the old content
/// at `from`, or (`from` None) written by an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub len: usize,
    pub from: Option<usize>,
}

const CONTEXT: usize = 3;
/// The most a hunk's header takes (`@@ -l,n +l,n @@`, 20-digit numbers).
const HEADER_ROOM: usize = 96;
pub const MAX_LINES: usize = 400;
pub const MAX_BYTES: usize = 32 * 1024;
/// The largest change (old lines times new lines) whose middle is
/// matched line by line.
const LCS_MAX: usize = 40_000;

/// The diff of `old` into `new` (whose `pieces` say what was copied),
/// naming the file `path`; empty when nothing changed.
pub fn unified(old: &[u8], new: &[u8], pieces: &[Piece], path: &str) -> Vec<u8> {
    let name = path.trim_start_matches('/');
    let mut printer = Printer { old, new, out: Sink::default(), hunk: None };
    let mut lines = LineCounter::default();
    let mut any = false;
    for region in regions(old, new, pieces) {
        for block in blocks(old, new, region, &mut lines) {
            if !any {
                printer.out.line(format!("--- a/{name}").as_bytes(), true);
                printer.out.line(format!("+++ b/{name}").as_bytes(), true);
                any = true;
            }
            printer.block(block);
        }
    }
    printer.flush();
    printer.out.finish()
}

/// A changed stretch: bytes `old.0..old.1` of the old content became bytes
/// `new.0..new.1` of the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Region {
    old: (usize, usize),
    new: (usize, usize),
}

/// The changed stretches, widened to whole lines and joined where they
/// share or touch one (so that adjacent changed lines print as `diff -u`
/// prints them: the removed ones, then the added ones), in order.
fn regions(old: &[u8], new: &[u8], pieces: &[Piece]) -> Vec<Region> {
    let mut merged: Vec<Region> = Vec::new();
    let mut add = |o_end: usize, n_end: usize, o: usize, n: usize| {
        if o_end == o && n_end == n {
            return;
        }
        let gap = Region { old: (o, o_end), new: (n, n_end) };
        let wide = widen(old, new, gap, merged.last());
        match merged.last_mut() {
            Some(last) if wide.old.0 <= last.old.1 || wide.new.0 <= last.new.1 => {
                last.old.1 = wide.old.1;
                last.new.1 = wide.new.1;
            }
            _ => merged.push(wide),
        }
    };
    let (mut o, mut n) = (0, 0);
    let mut at = 0;
    for piece in pieces {
        if let Some(from) = piece.from {
            add(from, at, o, n);
            o = from + piece.len;
            n = at + piece.len;
        }
        at += piece.len;
    }
    add(old.len(), new.len(), o, n);
    merged
}

/// A change widened to the lines it touches on both sides. The bytes
/// around it are copied (the same in old and new), so both widen alike.
///
/// Linear over all the changes of a file, however many share a line: the
/// search for a line's start stops at the end of the region `before` (a
/// change that reaches back to it joins it anyway), and a change that ends
/// before that region's end ends its line there. (Searching from the
/// change to the file's edges made a `replace_all` of 2,000,000 one-byte
/// matches on one 4 MB line take 170 s.)
fn widen(old: &[u8], new: &[u8], r: Region, before: Option<&Region>) -> Region {
    let (known_old, known_new) = before.map_or((0, 0), |b| (b.old.1, b.new.1));
    let start = |text: &[u8], at: usize, known: usize| {
        if at <= known {
            at
        } else {
            memrchr(b'\n', &text[known..at]).map_or(known, |i| known + i + 1)
        }
    };
    let line_start = |text: &[u8], at: usize| at == 0 || text[at - 1] == b'\n';
    let end = |text: &[u8], at: usize, known: usize| {
        if at < known {
            known
        } else {
            memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i + 1)
        }
    };
    let whole = line_start(old, r.old.1) && line_start(new, r.new.1);
    let (old_end, new_end) = if whole {
        (r.old.1, r.new.1)
    } else {
        (end(old, r.old.1, known_old), end(new, r.new.1, known_new))
    };
    Region {
        old: (start(old, r.old.0, known_old), old_end),
        new: (start(new, r.new.0, known_new), new_end),
    }
}

/// Line numbers (0-based) of positions taken in order, counted once.
#[derive(Default)]
struct LineCounter {
    old: (usize, usize),
    new: (usize, usize),
}

impl LineCounter {
    fn line(counted: &mut (usize, usize), text: &[u8], at: usize) -> usize {
        counted.0 += memchr::memchr_iter(b'\n', &text[counted.1..at]).count();
        counted.1 = at;
        counted.0
    }
}

/// Lines `a..b` of the old content (bytes `ob`) replaced by lines from
/// `c` of the new one (bytes `nb`); all lines before it are the same in
/// both.
#[derive(Debug, Clone, Copy)]
struct Block {
    a: usize,
    b: usize,
    c: usize,
    ob: (usize, usize),
    nb: (usize, usize),
}

/// The blocks of a region: its lines, less those old and new share.
/// The lines at its edges are compared in place (a region may be the
/// whole file); only a middle of at most `LCS_MAX` line pairs is split.
fn blocks(old: &[u8], new: &[u8], r: Region, counter: &mut LineCounter) -> Vec<Block> {
    let (mut o, mut n) = (r.old, r.new);
    while o.0 < o.1 && n.0 < n.1 {
        let (lo, ln) = (line_end(old, o.0, o.1), line_end(new, n.0, n.1));
        if old[o.0..lo] != new[n.0..ln] {
            break;
        }
        (o.0, n.0) = (lo, ln);
    }
    while o.1 > o.0 && n.1 > n.0 {
        let (so, sn) = (last_line(old, o.0, o.1), last_line(new, n.0, n.1));
        if old[so..o.1] != new[sn..n.1] {
            break;
        }
        (o.1, n.1) = (so, sn);
    }
    if o.0 == o.1 && n.0 == n.1 {
        return Vec::new();
    }
    let a0 = LineCounter::line(&mut counter.old, old, o.0);
    let c0 = LineCounter::line(&mut counter.new, new, n.0);
    let (old_count, new_count) = (count_lines(&old[o.0..o.1]), count_lines(&new[n.0..n.1]));
    if old_count == 0 || new_count == 0 || old_count.saturating_mul(new_count) > LCS_MAX {
        return vec![Block { a: a0, b: a0 + old_count, c: c0, ob: o, nb: n }];
    }
    let old_lines = split(old, o);
    let new_lines = split(new, n);
    let same = |i: usize, j: usize| {
        old[old_lines[i].0..old_lines[i].1] == new[new_lines[j].0..new_lines[j].1]
    };
    let pairs = common(old_lines.len(), new_lines.len(), &same);
    // The blocks between the matched pairs (and the end).
    let byte_o = |k: usize| old_lines.get(k).map_or(o.1, |l| l.0);
    let byte_n = |k: usize| new_lines.get(k).map_or(n.1, |l| l.0);
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (pi, pj) in pairs.into_iter().chain(std::iter::once((old_lines.len(), new_lines.len()))) {
        if pi > i || pj > j {
            out.push(Block {
                a: a0 + i,
                b: a0 + pi,
                c: c0 + j,
                ob: (byte_o(i), byte_o(pi)),
                nb: (byte_n(j), byte_n(pj)),
            });
        }
        (i, j) = (pi + 1, pj + 1);
    }
    out
}

/// The end of the line at `at`, within `..to`.
fn line_end(text: &[u8], at: usize, to: usize) -> usize {
    memchr(b'\n', &text[at..to]).map_or(to, |i| at + i + 1)
}

/// The start of the last line of `text[from..to]` (`to` > `from`).
fn last_line(text: &[u8], from: usize, to: usize) -> usize {
    memrchr(b'\n', &text[from..to - 1]).map_or(from, |i| from + i + 1)
}

/// The number of lines of `text`, the last one with or without `\n`.
fn count_lines(text: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', text).count() + usize::from(text.last().is_some_and(|&b| b != b'\n'))
}

/// The byte ranges of the lines of `text[range]` (a whole number of lines,
/// the last without `\n` only at the end of the text).
fn split(text: &[u8], range: (usize, usize)) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut at = range.0;
    while at < range.1 {
        let end = memchr(b'\n', &text[at..range.1]).map_or(range.1, |i| at + i + 1);
        lines.push((at, end));
        at = end;
    }
    lines
}

/// A longest common subsequence of `n` old lines and `m` new ones, as
/// matched pairs in order (dynamic programming: `n * m` is at most
/// `LCS_MAX`).
fn common(n: usize, m: usize, same: &dyn Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    // length[i][j]: the LCS of old i.. and new j..
    let mut length = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            length[at(i, j)] = if same(i, j) {
                length[at(i + 1, j + 1)] + 1
            } else {
                length[at(i + 1, j)].max(length[at(i, j + 1)])
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same(i, j) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if length[at(i + 1, j)] >= length[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// Groups blocks into hunks and prints them.
struct Printer<'a> {
    old: &'a [u8],
    new: &'a [u8],
    out: Sink,
    hunk: Option<Hunk>,
}

/// The hunk being gathered: where it starts, how many lines it spans on
/// each side, its body (bounded), and where its last block ended.
struct Hunk {
    old_start: usize,
    new_start: usize,
    old_count: usize,
    new_count: usize,
    body: Sink,
    end: Block,
}

impl Printer<'_> {
    fn block(&mut self, block: Block) {
        match &mut self.hunk {
            Some(hunk) if block.a - hunk.end.b <= 2 * CONTEXT => {
                let between = (hunk.end.ob.1, block.ob.0);
                let n = hunk.body.lines_of(b' ', self.old, between);
                hunk.old_count += n;
                hunk.new_count += n;
            }
            _ => {
                self.flush();
                let from = back_lines(self.old, block.ob.0, CONTEXT);
                // What the diff has left, less its header line.
                let (lines, bytes) = self.out.room();
                let room = (lines.saturating_sub(1), bytes.saturating_sub(HEADER_ROOM));
                let mut body = Sink { budget: Some(room), ..Sink::default() };
                let n = body.lines_of(b' ', self.old, (from, block.ob.0));
                self.hunk = Some(Hunk {
                    old_start: block.a - n,
                    new_start: block.c - n,
                    old_count: n,
                    new_count: n,
                    body,
                    end: block,
                });
            }
        }
        if let Some(hunk) = &mut self.hunk {
            hunk.old_count += hunk.body.lines_of(b'-', self.old, block.ob);
            hunk.new_count += hunk.body.lines_of(b'+', self.new, block.nb);
            hunk.end = block;
        }
    }

    /// Prints the hunk gathered, with its context after.
    fn flush(&mut self) {
        let Some(mut hunk) = self.hunk.take() else {
            return;
        };
        let from = hunk.end.ob.1;
        let to = forward_lines(self.old, from, CONTEXT);
        let n = hunk.body.lines_of(b' ', self.old, (from, to));
        hunk.old_count += n;
        hunk.new_count += n;
        let header = format!(
            "@@ -{} +{} @@",
            range(hunk.old_start, hunk.old_count),
            range(hunk.new_start, hunk.new_count)
        );
        self.out.line(header.as_bytes(), true);
        self.out.append(hunk.body);
    }
}

/// `l,n` as `diff -u` writes a hunk's range: 1-based, `,1` left out, the
/// line before it for an empty one.
fn range(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

/// Where the `n` lines before `at` (a line start) start.
fn back_lines(text: &[u8], at: usize, n: usize) -> usize {
    let mut from = at;
    for _ in 0..n {
        if from == 0 {
            break;
        }
        from = memrchr(b'\n', &text[..from - 1]).map_or(0, |i| i + 1);
    }
    from
}

/// Where the `n` lines from `at` (a line start) end.
fn forward_lines(text: &[u8], at: usize, n: usize) -> usize {
    let mut to = at;
    for _ in 0..n {
        if to == text.len() {
            break;
        }
        to = memchr(b'\n', &text[to..]).map_or(text.len(), |i| to + i + 1);
    }
    to
}

/// Diff lines kept within the bounds, and those left out counted.
#[derive(Default)]
struct Sink {
    text: Vec<u8>,
    lines: usize,
    omitted: u64,
    /// The bytes this sink may keep (a hunk's body: what the diff has left).
    budget: Option<(usize, usize)>,
}

impl Sink {
    /// What is left of the bounds: (lines, bytes).
    fn room(&self) -> (usize, usize) {
        let (lines, bytes) = self.budget.unwrap_or((MAX_LINES, MAX_BYTES));
        (lines.saturating_sub(self.lines), bytes.saturating_sub(self.text.len()))
    }

    /// One line (without its newline); `complete`: it ended with one.
    fn line(&mut self, line: &[u8], complete: bool) {
        self.one(line);
        if !complete {
            self.one(b"\\ No newline at end of file");
        }
    }

    fn one(&mut self, line: &[u8]) {
        let (lines, bytes) = self.room();
        if self.omitted > 0 || lines == 0 {
            self.omitted += 1;
            return;
        }
        if line.len() < bytes {
            self.text.extend_from_slice(line);
            self.text.push(b'\n');
            self.lines += 1;
            return;
        }
        // Cut between characters; the line counts as left out.
        let mut end = bytes.saturating_sub(1);
        while end > 0 && line.get(end).is_some_and(|b| b & 0xC0 == 0x80) {
            end -= 1;
        }
        self.text.extend_from_slice(&line[..end]);
        self.text.push(b'\n');
        self.omitted += 1;
    }

    /// The lines of `text[range]`, each after `mark`; how many.
    fn lines_of(&mut self, mark: u8, text: &[u8], range: (usize, usize)) -> usize {
        let mut count = 0;
        let mut at = range.0;
        let mut line = Vec::new();
        while at < range.1 {
            let (end, complete) = match memchr(b'\n', &text[at..range.1]) {
                Some(i) => (at + i, true),
                None => (range.1, false),
            };
            count += 1;
            if self.omitted == 0 && self.room().0 > 0 {
                line.clear();
                line.push(mark);
                line.extend_from_slice(&text[at..end]);
                self.line(&line, complete);
            } else {
                self.omitted += 1 + u64::from(!complete);
            }
            at = end + usize::from(complete);
        }
        count
    }

    /// A hunk's body after its header.
    fn append(&mut self, body: Sink) {
        if self.omitted == 0 {
            self.text.extend_from_slice(&body.text);
            self.lines += body.lines;
        } else {
            self.omitted += body.lines as u64;
        }
        self.omitted += body.omitted;
    }

    fn finish(mut self) -> Vec<u8> {
        if self.omitted > 0 {
            let marker = format!("[... {} more diff lines omitted ...]\n", self.omitted);
            self.text.extend_from_slice(marker.as_bytes());
        }
        self.text
    }
}

/// Puts `diff` into the answer's field at `at` (an empty placeholder so
/// far), bounded within what the output limit leaves once the other
/// fields are written: the diff gives way, never the fields a host reads.
pub fn fill_bounded(fields: &mut Answer, at: usize, diff: &[u8], limit: Option<usize>) {
    let mut written = Vec::new();
    let others = match json::write_object(&mut written, fields) {
        Ok(()) => written.len(),
        Err(_) => 0,
    };
    let mut bounded = Bounded::for_answer(limit.map(|l| l.saturating_sub(others)));
    bounded.push(diff);
    if let Some(field) = fields.get_mut(at) {
        field.1 = Field::Parts(bounded.finish_parts());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::file_edit::edits::{apply, Edit};

    fn diff(old: &str, edits: &[(&str, &str, bool)]) -> String {
        let edits: Vec<Edit> = edits
            .iter()
            .map(|&(o, n, all)| Edit { old: o, new: n, replace_all: all, index: None })
            .collect();
        let applied = apply(old.as_bytes(), &edits).unwrap();
        String::from_utf8(unified(old.as_bytes(), &applied.content, &applied.pieces, "f")).unwrap()
    }

    #[test]
    fn one_line_changed_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        assert_eq!(
            diff(old, &[("5", "five", false)]),
            "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        assert_eq!(
            diff(old, &[("1\n", "", false)]),
            "--- a/f\n+++ b/f\n@@ -1,4 +1,3 @@\n-1\n 2\n 3\n 4\n"
        );
        assert_eq!(
            diff(old, &[("9\n", "9\n10\n", false)]),
            "--- a/f\n+++ b/f\n@@ -7,3 +7,4 @@\n 7\n 8\n 9\n+10\n"
        );
    }

    #[test]
    fn changes_close_together_share_a_hunk_far_ones_do_not() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        assert_eq!(
            diff(&old, &[("\n3\n", "\nthree\n", false), ("\n9\n", "\nnine\n", false)]),
            "--- a/f\n+++ b/f\n@@ -1,12 +1,12 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n"
        );
        let two = diff(&old, &[("\n3\n", "\nthree\n", false), ("\n17\n", "\n", false)]);
        assert_eq!(
            two,
            "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -14,7 +14,6 @@\n 14\n 15\n 16\n-17\n 18\n 19\n 20\n"
        );
    }

    #[test]
    fn lines_kept_inside_a_change_are_context() {
        assert_eq!(
            diff("a\nb\nc\n", &[("a\nb\nc", "A\nb\nC", false)]),
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n-c\n+C\n"
        );
        assert_eq!(
            diff("a\nb\n", &[("a\nb", "a\nnew\nb", false)]),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+new\n b\n"
        );
    }

    #[test]
    fn no_newline_at_the_end_and_an_edit_undone_by_the_next() {
        assert_eq!(
            diff("a\nb", &[("b", "c", false)]),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(diff("x y\n", &[("x", "z", false), ("z", "x", false)]), "");
        assert_eq!(
            diff("ab", &[("b", "b\n", false)]),
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-ab\n\\ No newline at end of file\n+ab\n"
        );
    }

    #[test]
    fn a_long_diff_is_cut_with_a_count() {
        let old = "x\n".repeat(1000);
        let d = diff(&old, &[("x", "y", true)]);
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), MAX_LINES + 1);
        // 3 header lines, 2000 changed lines: all but 397 left out.
        assert_eq!(lines[MAX_LINES], "[... 1603 more diff lines omitted ...]");
        let long = "é".repeat(MAX_BYTES) + "x";
        let d = diff(&long, &[("x", "y", false)]);
        assert!(d.len() <= MAX_BYTES + 64, "{}", d.len());
        assert!(d.ends_with("[... 4 more diff lines omitted ...]\n"), "{}", &d[d.len() - 60..]);
    }

    /// Applies a unified diff to `old` as `patch` would, checking every
    /// context and removed line and each hunk's counts.
    fn patched(old: &str, diff: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0;
        let mut lines = diff.split_inclusive('\n').skip(2).peekable();
        while let Some(header) = lines.next() {
            let old_range = header.split(' ').nth(1).unwrap().trim_start_matches('-');
            let (start, count) = match old_range.split_once(',') {
                Some((l, n)) => (l.parse::<usize>().unwrap(), n.parse::<usize>().unwrap()),
                None => (old_range.parse().unwrap(), 1),
            };
            let first = if count == 0 { start } else { start - 1 };
            out.extend(old_lines[at..first].iter().copied());
            at = first;
            while let Some(line) = lines.next_if(|l| !l.starts_with("@@")) {
                let (mark, text) = line.split_at(1);
                if mark == "\\" {
                    continue; // The line before had no newline: cut below.
                }
                let text = if lines.peek().is_some_and(|l| l.starts_with('\\')) {
                    text.trim_end_matches('\n')
                } else {
                    text
                };
                match mark {
                    " " | "-" => {
                        assert_eq!(old_lines[at], text, "{diff}");
                        if mark == " " {
                            out.push_str(text);
                        }
                        at += 1;
                    }
                    "+" => out.push_str(text),
                    _ => panic!("{line:?} in {diff}"),
                }
            }
        }
        out.extend(old_lines[at..].iter().copied());
        out
    }

    #[test]
    fn random_edits_give_diffs_that_patch_old_into_new() {
        let mut x: u64 = 0x1234_5678;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let words = ["a", "b", "c", "\n", "\n", "ab\n", "x"];
        for case in 0..3000 {
            let old: String = (0..next(40)).map(|_| words[next(7) as usize]).collect();
            let mut current = old.clone();
            let mut edits = Vec::new();
            for _ in 0..1 + next(4) {
                let from = next(current.len() as u64 + 1) as usize;
                let to = (from + 1 + next(6) as usize).min(current.len());
                if from >= to {
                    continue;
                }
                let target = current[from..to].to_owned();
                let new: String = (0..next(5)).map(|_| words[next(7) as usize]).collect();
                if new == target {
                    continue;
                }
                let all = next(2) == 0;
                let count = current.matches(target.as_str()).count();
                if count > 1 && !all {
                    continue;
                }
                current = current.replace(target.as_str(), &new);
                edits.push((target, new, all));
            }
            let edits: Vec<Edit> = edits
                .iter()
                .map(|(o, n, all)| Edit { old: o, new: n, replace_all: *all, index: None })
                .collect();
            let applied = apply(old.as_bytes(), &edits).unwrap();
            assert_eq!(&applied.content[..], current.as_bytes(), "case {case}");
            let d =
                String::from_utf8(unified(old.as_bytes(), &applied.content, &applied.pieces, "f"))
                    .unwrap();
            assert_eq!(d.is_empty(), old == current, "case {case}: {old:?} -> {current:?}\n{d}");
            if !d.is_empty() {
                assert_eq!(patched(&old, &d), current, "case {case}: {old:?}\n{d}");
            }
        }
    }
}
