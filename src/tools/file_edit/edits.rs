//! The full profile's edits applied in order, each to the result of the
//! one before, in memory: nothing reaches the file until all have
//! succeeded (docs/TOOLS.md, "file_edit", "Full profile").
//!
//! Besides the new content, what each byte of it is: copied from the old
//! content (and from where), or put there by an edit. The diff
//! (`super::diff`) is made from that, not by comparing the two texts.
//! Memory: the old content, the current one and the next (three times the
//! file at most; twice for one edit, the old content is not copied), and
//! the pieces: at most two a changed line (`holds_a_line`); a buffer that
//! cannot be had is `OUT_OF_MEMORY`. Work: each edit goes over the whole
//! content, so the edits of one call are bounded (`MAX_EDITS`, `MAX_WORK`).

use std::borrow::Cow;

use memchr::memmem;

use crate::error::ToolError;
use crate::json::Field;
use crate::memory;

use super::hints;
use super::to_crlf;
use crate::tools::diff::Piece;

/// The most edits one call takes: a number no model needs (a multi-edit is
/// a handful, a few dozen at most), whatever the file.
pub const MAX_EDITS: usize = 1000;

/// The most work one call's edits may take, in edits times the file's
/// bytes: each edit goes over the whole content (counts its matches, then
/// builds the next content), so this bounds the time before the answer.
/// 20,000 edits of a 22 MB file took 67 to 74 s, past a host's 30 s; at
/// this bound a call answers in about 2 s (docs/TOOLS.md, file_edit, "Full
/// profile"). One edit is never refused: it is the seed's, on any file.
pub const MAX_WORK: u64 = 8 << 30;

/// The edits one call takes for a file of `size` bytes: at least one.
pub fn most_edits_for(size: u64) -> usize {
    let by_work = usize::try_from(MAX_WORK / size.max(1)).unwrap_or(usize::MAX);
    by_work.clamp(1, MAX_EDITS)
}

/// Refuses, before any is applied, more edits than the call takes for a
/// file of `size` bytes: `INVALID_ARG` saying the bound and what to do.
pub fn check_work(count: usize, size: u64, path: &str) -> Result<(), ToolError> {
    let most = most_edits_for(size);
    if count <= most {
        return Ok(());
    }
    Err(ToolError::InvalidArg(format!(
        "parameter edits holds {count} edits for {path} ({size} bytes): each edit goes over \
         the whole file, and one call takes at most {most} for a file this size (edits times \
         the file's bytes at most {MAX_WORK}, and {MAX_EDITS} edits); {TO_DO}"
    )))
}

/// What to do with more edits than one call takes.
pub const TO_DO: &str = "split them into several calls, each passing the sha256 the one \
    before answered as expected_sha256, or write the whole new content with file_write; \
    nothing was written";

/// One replacement asked for.
pub struct Edit<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub replace_all: bool,
    /// Its place in `edits`; `None` for top-level `old_string`.
    pub index: Option<usize>,
}

/// The edits applied.
#[derive(Debug)]
pub struct Applied<'a> {
    /// The new content; the old one itself until an edit replaced something.
    pub content: Cow<'a, [u8]>,
    /// The pieces of `content`, in order, covering it exactly.
    pub pieces: Vec<Piece>,
    /// Replacements made, over all edits.
    pub count: usize,
}

/// Applies `edits` to `old` in order. The first that fails answers its
/// error (with the full profile's hints); then nothing is to be written.
pub fn apply<'a>(old: &'a [u8], edits: &[Edit]) -> Result<Applied<'a>, ToolError> {
    let mut content = Cow::Borrowed(old);
    let mut pieces = vec![Piece { len: old.len(), from: Some(0) }];
    let mut count = 0;
    for edit in edits {
        let (found, crlf) = occurrences(&content, edit)?;
        if found == 0 {
            continue;
        }
        let (old_bytes, new_bytes) =
            crlf.as_ref().map_or((edit.old.as_bytes(), edit.new.as_bytes()), |(o, n)| {
                (o.as_slice(), n.as_slice())
            });
        let (next, next_pieces) = replace(&content, &pieces, old_bytes, new_bytes, found)?;
        content = Cow::Owned(next);
        pieces = next_pieces;
        count += found;
    }
    Ok(Applied { content, pieces, count })
}

/// How often the edit's `old` occurs in `content` (left to right, without
/// overlap), and, when only its CRLF form does (docs/TOOLS.md, CRLF files),
/// the strings in that form. Not found or not unique without
/// `replace_all` is the error, with its hints.
#[allow(clippy::type_complexity)]
fn occurrences(
    content: &[u8],
    edit: &Edit,
) -> Result<(usize, Option<(Vec<u8>, Vec<u8>)>), ToolError> {
    let (old, new) = (edit.old.as_bytes(), edit.new.as_bytes());
    let mut count = memmem::find_iter(content, old).count();
    let mut crlf = None;
    if count == 0 && old.contains(&b'\n') && memmem::find(content, b"\r\n").is_some() {
        let converted = (to_crlf(old), to_crlf(new));
        count = memmem::find_iter(content, &converted.0).count();
        crlf = Some(converted);
    }
    let searched = crlf.as_ref().map_or(old, |(o, _)| o.as_slice());
    if count == 0 && !edit.replace_all {
        let closest = hints::closest(content, edit.old).map(|c| after_edits(c, edit.index));
        return Err(failed(ToolError::NotFound, edit.index, closest.map(|c| ("closest", c))));
    }
    if count > 1 && !edit.replace_all {
        let lines = ("lines", hints::lines(content, searched));
        return Err(failed(ToolError::NotUnique(count), edit.index, Some(lines)));
    }
    Ok((count, crlf))
}

/// The error of a failed edit: its hint, and, in `edits`, which edit and,
/// after the first, that it was looked for in the text the edits before it
/// made, where the hint's line numbers are counted: a line that is not in
/// the file would otherwise send a model looking for it there.
fn failed(
    error: ToolError,
    index: Option<usize>,
    hint: Option<(&'static str, Field)>,
) -> ToolError {
    let mut fields = Vec::new();
    let note = index.map(|i| {
        fields.push(("edit", Field::Int(as_int(i))));
        let before = match i {
            0 => String::new(),
            1 => ", looked for after edits[0] was applied in memory: line numbers are in that \
                  text"
                .to_owned(),
            _ => format!(
                ", looked for after edits[0]-edits[{}] were applied in memory: line numbers are \
                 in that text",
                i - 1
            ),
        };
        format!("edits[{i}].old_string{before}; no edit was written")
    });
    fields.extend(hint);
    error.detailed(note, fields)
}

/// `closest` of the edit `index` of `edits`, with `after_edits`, how many
/// edits before it made the text its line is in, when there were any.
fn after_edits(closest: Field, index: Option<usize>) -> Field {
    match (closest, index) {
        (Field::Object(mut fields), Some(i)) if i > 0 => {
            fields.push(("after_edits", Field::Int(as_int(i))));
            Field::Object(fields)
        }
        (closest, _) => closest,
    }
}

fn as_int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `content` with its `count` occurrences of `old` replaced by `new`, and
/// the pieces of the result.
fn replace(
    content: &[u8],
    pieces: &[Piece],
    old: &[u8],
    new: &[u8],
    count: usize,
) -> Result<(Vec<u8>, Vec<Piece>), ToolError> {
    let size = (content.len() - count * old.len()).saturating_add(count * new.len());
    let mut out = Vec::new();
    memory::try_reserve(&mut out, size).map_err(|_| ToolError::AllocationFailed)?;
    let mut cut = Cutter { pieces, index: 0, start: 0, out: Vec::new() };
    let mut last = 0;
    for (i, pos) in memmem::find_iter(content, old).enumerate() {
        out.extend_from_slice(&content[last..pos]);
        out.extend_from_slice(new);
        if i > 0 && !holds_a_line(content, last, pos) {
            cut.changed(last, pos);
        } else {
            cut.take(last, pos);
        }
        cut.push(Piece { len: new.len(), from: None });
        last = pos + old.len();
    }
    out.extend_from_slice(&content[last..]);
    cut.take(last, content.len());
    Ok((out, cut.out))
}

/// Whether the stretch `from..to` of `content` between two replacements
/// holds a whole line, one the diff can show unchanged: two line ends, or
/// one and the stretch starts a line. One that holds none lies in the
/// changed lines around it whatever it is (`diff::widen` joins them), so
/// it is taken as changed: one piece for the run of replacements, not two
/// for each (a `replace_all` of 2,000,000 one-byte matches on one line
/// made 4,000,000 pieces, 96 MB for a 4 MB file).
fn holds_a_line(content: &[u8], from: usize, to: usize) -> bool {
    let stretch = &content[from..to];
    let Some(first) = memchr::memchr(b'\n', stretch) else { return false };
    let starts_a_line = from == 0 || content[from - 1] == b'\n';
    starts_a_line || memchr::memchr(b'\n', &stretch[first + 1..]).is_some()
}

/// Cuts the pieces of a content into those of its stretches, taken in
/// order, and joins neighbours that continue one another.
struct Cutter<'a> {
    pieces: &'a [Piece],
    /// The piece that holds the next byte asked for, and where it starts.
    index: usize,
    start: usize,
    out: Vec<Piece>,
}

impl Cutter<'_> {
    /// The pieces of bytes `from..to` (`from` at or past earlier requests).
    fn take(&mut self, from: usize, to: usize) {
        let mut at = from;
        while at < to {
            let Some(&piece) = self.pieces.get(self.index) else {
                return;
            };
            let end = self.start + piece.len;
            if at >= end {
                self.index += 1;
                self.start = end;
                continue;
            }
            let len = end.min(to) - at;
            let from = piece.from.map(|f| f + (at - self.start));
            self.push(Piece { len, from });
            at += len;
        }
    }

    /// Bytes `from..to` as one changed piece (`from` at or past earlier
    /// requests).
    fn changed(&mut self, from: usize, to: usize) {
        // Past the pieces that end by `to`, as `take` would go.
        while let Some(&piece) = self.pieces.get(self.index) {
            let end = self.start + piece.len;
            if end > to {
                break;
            }
            self.index += 1;
            self.start = end;
        }
        self.push(Piece { len: to - from, from: None });
    }

    fn push(&mut self, piece: Piece) {
        if piece.len == 0 {
            return;
        }
        if let Some(last) = self.out.last_mut() {
            let continues = match (last.from, piece.from) {
                (None, None) => true,
                (Some(a), Some(b)) => a + last.len == b,
                _ => false,
            };
            if continues {
                last.len += piece.len;
                return;
            }
        }
        self.out.push(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit<'a>(old: &'a str, new: &'a str, all: bool) -> Edit<'a> {
        Edit { old, new, replace_all: all, index: None }
    }

    #[test]
    fn edits_apply_in_order_and_pieces_say_what_was_copied() {
        let applied =
            apply(b"a\nb\nc\nb\n", &[edit("b", "XY", true), edit("XY\nc", "z", false)]).unwrap();
        assert_eq!(&applied.content[..], b"a\nz\nXY\n");
        assert_eq!(applied.count, 3);
        assert_eq!(
            applied.pieces,
            [
                Piece { len: 2, from: Some(0) },
                Piece { len: 1, from: None },
                Piece { len: 1, from: Some(5) },
                Piece { len: 2, from: None },
                Piece { len: 1, from: Some(7) },
            ]
        );
    }

    /// Between two replacements, bytes that hold no whole line are taken
    /// as changed: one piece for a run of replacements on a line, whose
    /// diff is the same (the line removed and added).
    #[test]
    fn a_run_of_replacements_on_a_line_is_one_piece() {
        let applied = apply(b"abababab\nab\n", &[edit("a", "c", true)]).unwrap();
        assert_eq!(&applied.content[..], b"cbcbcbcb\ncb\n");
        // "b\n" between the first line's last match and the second's: no
        // whole line.
        assert_eq!(
            applied.pieces,
            [Piece { len: 10, from: None }, Piece { len: 2, from: Some(10) }]
        );
        let many = b"ab".repeat(100_000);
        let applied = apply(&many, &[edit("a", "c", true)]).unwrap();
        assert_eq!(applied.count, 100_000);
        assert_eq!(
            applied.pieces,
            [Piece { len: 199_999, from: None }, Piece { len: 1, from: Some(199_999) }]
        );
    }

    #[test]
    fn pieces_cover_the_content() {
        let old = b"one\ntwo\nthree\ntwo\n";
        let applied =
            apply(old, &[edit("two", "2", true), edit("\n2\n", "\n", false)]).unwrap_err();
        assert_eq!(applied.code(), "NOT_UNIQUE");
        let applied = apply(old, &[edit("two", "2", true), edit("three", "", false)]).unwrap();
        assert_eq!(&applied.content[..], b"one\n2\n\n2\n");
        assert_eq!(applied.pieces.iter().map(|p| p.len).sum::<usize>(), applied.content.len());
        let mut at = 0;
        for p in &applied.pieces {
            if let Some(from) = p.from {
                assert_eq!(old[from..from + p.len], applied.content[at..at + p.len]);
            }
            at += p.len;
        }
    }
}
