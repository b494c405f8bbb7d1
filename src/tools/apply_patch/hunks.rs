//! A file's chunks applied to its text, as OpenAI's apply_patch applies
//! them: every chunk located first, in order, then all replaced at once
//! (each position refers to the original text, as applying them bottom-up
//! does). A chunk that is not found says which line diverged and what the
//! file has closest to it.
//!
//! - A chunk's `@@` lines are found first, each after the previous (one
//!   line each, with the ladder of `seek`), then its old lines after them;
//!   every search starts where the previous chunk ended, so chunks cannot
//!   overlap: one whose lines are only above that point is refused, saying
//!   where they are.
//! - Old lines ending in an empty line that are not found are tried again
//!   without it (and the new lines likewise): models add an empty line for
//!   the file's last line end.
//! - A chunk with `*** End of File` is tried at the end of the file first.
//! - A pure addition (no old lines) goes after its last `@@` line; without
//!   one, or with `*** End of File`, at the end of the file (before a final
//!   empty line, as OpenAI's, which puts every pure addition there).
//! - A context line keeps the file's text, also when it matched on a
//!   lenient rung (OpenAI's writes the patch's text instead, so that a
//!   context line differing in whitespace or quotes changes the file).
//! - The result ends with '\n', as OpenAI's does, except that a file whose
//!   last line had none keeps it so when that line is left as it was and
//!   stays last.

use super::parse::{quoted, Chunk};
use super::seek::{matches_at, seek};

/// A chunk that could not be located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoMatch {
    /// 1-based among the file's chunks.
    pub hunk: usize,
    /// Its `@@` text, if any (the last of stacked ones).
    pub header: Option<String>,
    /// The first line (context or old) that was not found: of the chunk's
    /// old lines, the one after the longest run of them that is in the
    /// file (below where the chunk may start).
    pub wanted: String,
    /// Its 1-based line in the patch.
    pub wanted_at: usize,
    /// The file's line in its place, 1-based, and its text: the line after
    /// the run that matched (where the run is in several places, the one
    /// most like `wanted`), or else the file's line most like `wanted`.
    pub closest: Option<(usize, String)>,
    /// Where the chunk's lines are whole (1-based), when that is only above
    /// `searched_from`: the chunks are out of order or overlap.
    pub before: Option<usize>,
    /// The 1-based file line where the search began: after the previous
    /// chunk and this one's `@@` lines.
    pub searched_from: usize,
}

impl NoMatch {
    /// One bounded line for the file `path`:
    /// "src/a.rs: hunk 2 (@@ fn main): line 14 of the patch `    let x = 1;`
    /// not found; closest line 37: `    let x = 2;`".
    pub fn message(&self, path: &str) -> String {
        let header = match &self.header {
            Some(text) => format!(" (@@ {})", cut(text)),
            None => String::new(),
        };
        let hunk = format!("{path}: hunk {}{header}", self.hunk);
        if let Some(line) = self.before {
            return format!(
                "{hunk}: its lines are at line {line}, above line {} where it may start (after the previous hunk and its @@ lines): give hunks in file order, without overlap",
                self.searched_from
            );
        }
        let found = match &self.closest {
            Some((line, text)) => format!("closest line {line}: {}", quoted(text)),
            None => "no line of the file is like it".to_string(),
        };
        format!(
            "{hunk}: line {} of the patch {} not found; {found}",
            self.wanted_at,
            quoted(&self.wanted)
        )
    }
}

fn cut(text: &str) -> String {
    let quoted = quoted(text);
    quoted[1..quoted.len() - 1].to_string()
}

/// Applies `chunks` to `old` (text with '\n' line ends, as text.rs
/// decodes it); the new text.
pub fn apply(old: &str, chunks: &[Chunk]) -> Result<String, NoMatch> {
    let ends_with_newline = old.is_empty() || old.ends_with('\n');
    let mut lines: Vec<&str> = old.split('\n').collect();
    if ends_with_newline {
        lines.pop();
    }
    let replacements = locate(&lines, chunks)?;
    Ok(rebuild(&lines, &replacements, ends_with_newline))
}

/// Old lines `start..start + len` become `new`; a new line with an index
/// in `unchanged` is the old line there, kept as the file has it.
struct Replacement<'c> {
    start: usize,
    len: usize,
    new: &'c [String],
    unchanged: &'c [Option<usize>],
}

fn locate<'c>(lines: &[&str], chunks: &'c [Chunk]) -> Result<Vec<Replacement<'c>>, NoMatch> {
    let mut replacements = Vec::with_capacity(chunks.len());
    let mut next = 0;
    for (index, chunk) in chunks.iter().enumerate() {
        let mut at = next;
        for (k, context) in chunk.context.iter().enumerate() {
            let wanted = std::slice::from_ref(context);
            match seek(lines, wanted, at, false) {
                Some(found) => at = found + 1,
                None => {
                    let place = Wanted { lines: wanted, at: &chunk.context_at[k..] };
                    return Err(not_found(lines, chunk, index, place, at));
                }
            }
        }
        if chunk.old_lines.is_empty() {
            let start = if !chunk.context.is_empty() && !chunk.end_of_file {
                at
            } else if lines.last() == Some(&"") {
                lines.len() - 1
            } else {
                lines.len()
            };
            replacements.push(Replacement { start, len: 0, new: &chunk.new_lines, unchanged: &[] });
            next = at;
            continue;
        }
        let mut old = &chunk.old_lines[..];
        let mut new = &chunk.new_lines[..];
        let mut found = seek(lines, old, at, chunk.end_of_file);
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = seek(lines, old, at, chunk.end_of_file);
        }
        let Some(start) = found else {
            let place = Wanted { lines: &chunk.old_lines, at: &chunk.old_at };
            return Err(not_found(lines, chunk, index, place, at));
        };
        let unchanged = &chunk.unchanged[..new.len().min(chunk.unchanged.len())];
        replacements.push(Replacement { start, len: old.len(), new, unchanged });
        next = start + old.len();
    }
    // Pure additions at the end come before later chunks: in place order
    // (stable, so two at one place keep the patch's order).
    replacements.sort_by_key(|r| r.start);
    Ok(replacements)
}

fn rebuild(lines: &[&str], replacements: &[Replacement<'_>], ends_with_newline: bool) -> String {
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut kept = 0;
    for r in replacements {
        out.extend_from_slice(&lines[kept..r.start]);
        out.extend(r.new.iter().enumerate().map(|(j, text)| {
            match r.unchanged.get(j).copied().flatten() {
                Some(i) if i < r.len => lines[r.start + i],
                _ => text.as_str(),
            }
        }));
        kept = r.start + r.len;
    }
    out.extend_from_slice(&lines[kept.min(lines.len())..]);
    let last_untouched = replacements.iter().all(|r| r.start + r.len < lines.len());
    let mut text = out.join("\n");
    if !out.is_empty() && (ends_with_newline || !last_untouched) {
        text.push('\n');
    }
    text
}

/// The lines of a chunk that were looked for, and their patch lines.
struct Wanted<'c> {
    lines: &'c [String],
    at: &'c [usize],
}

/// Why `wanted` is not at or after `from`: the first of its lines that
/// diverges, and the file's line in its place.
fn not_found(
    lines: &[&str],
    chunk: &Chunk,
    index: usize,
    wanted: Wanted<'_>,
    from: usize,
) -> NoMatch {
    let trimmed = match wanted.lines.split_last() {
        Some((last, rest)) if last.is_empty() => rest,
        _ => wanted.lines,
    };
    let whole = seek(lines, wanted.lines, 0, false)
        .or_else(|| seek(lines, trimmed, 0, false))
        .filter(|&found| found < from);
    // The longest run of the first lines that is in the file below `from`
    // (a run that matches implies its shorter ones do: a binary search).
    let (mut matched, mut fails) = (0, wanted.lines.len());
    while fails - matched > 1 {
        let middle = (matched + fails) / 2;
        if seek(lines, &wanted.lines[..middle], from, false).is_some() {
            matched = middle;
        } else {
            fails = middle;
        }
    }
    let missing = &wanted.lines[matched];
    let run = &wanted.lines[..matched];
    let everywhere = (from..lines.len()).chain(0..from.min(lines.len()));
    let closest = after_run(lines, run, missing, from)
        .or_else(|| most_similar(lines, missing, everywhere, LEAST_SCORE));
    NoMatch {
        hunk: index + 1,
        header: chunk.context.last().cloned(),
        wanted: missing.clone(),
        wanted_at: wanted.at.get(matched).copied().unwrap_or(chunk.patch_line),
        closest,
        before: whole.map(|found| found + 1),
        searched_from: from + 1,
    }
}

/// How like a line must be to be named when nothing else places it.
const LEAST_SCORE: f64 = 0.5;

/// Of the places where `run` (the first old lines) matches at or after
/// `from`, the file line after it most like `missing` (on a tie, the
/// first). A run of only blank lines and lone brackets matches almost
/// anywhere: the line after it counts only if it is like `missing`.
fn after_run(
    lines: &[&str],
    run: &[String],
    missing: &str,
    from: usize,
) -> Option<(usize, String)> {
    if run.is_empty() {
        return None;
    }
    let trivial = run.iter().all(|line| line.trim().chars().count() <= 1);
    let last = lines.len().checked_sub(run.len() + 1)?;
    let places = (from..=last).filter(|&at| matches_at(lines, run, at)).map(|at| at + run.len());
    most_similar(lines, missing, places, if trivial { LEAST_SCORE } else { 0.0 })
}

/// Of the file lines `candidates` (0-based), the one most like `wanted`,
/// 1-based and its text: by the Sørensen–Dice coefficient of their
/// character pairs, whitespace left out and lines cut to 256 characters
/// (linear in their length), at least `least`; on a tie, the first.
fn most_similar(
    lines: &[&str],
    wanted: &str,
    candidates: impl Iterator<Item = usize>,
    least: f64,
) -> Option<(usize, String)> {
    const MOST: usize = 256;
    let head = |text: &str| {
        text.char_indices().nth(MOST).map_or(text, |(cut, _)| &text[..cut]).to_string()
    };
    let wanted = head(wanted);
    let mut best: Option<(f64, usize)> = None;
    for index in candidates {
        let score = strsim::sorensen_dice(&head(lines[index]), &wanted);
        if score >= least && best.is_none_or(|(top, _)| score > top) {
            best = Some((score, index));
        }
    }
    best.map(|(_, index)| (index + 1, lines[index].to_string()))
}

#[cfg(test)]
#[path = "hunks_tests.rs"]
mod tests;
