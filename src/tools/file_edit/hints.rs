//! What a failed edit tells besides its error (full profile, docs/SPEC.md,
//! "Error codes"): for `NOT_FOUND` the line of the file most like the
//! first line of `old_string`, for `NOT_UNIQUE` the lines where it starts.
//!
//! The work is bounded on any file: one pass over it scores every line
//! cheaply (the byte pairs it shares with the line looked for, as 256-bit
//! sets), and only the best `CANDIDATES` are compared exactly (normalized
//! Levenshtein distance, strsim), each cut to `COMPARED` characters.

use memchr::memmem;

use crate::json::Field;

/// Lines compared exactly.
const CANDIDATES: usize = 64;
/// Characters of a line (and of the line looked for) compared.
const COMPARED: usize = 256;
/// Bytes of a line scored cheaply.
const SCORED: usize = 1024;
/// The most bytes of the closest line answered.
const TEXT_MAX: usize = 400;
/// The most line numbers `lines` holds.
pub const LINES_MAX: usize = 20;

/// `{"line": N, "text": "..."}`: the line most like the first line of
/// `old` that is not blank, compared without their leading and trailing
/// white space; `None` for an empty file or nothing alike at all.
pub fn closest(content: &[u8], old: &str) -> Option<Field> {
    let wanted = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    let wanted: String = wanted.chars().take(COMPARED).collect();
    let wanted_set = pairs(wanted.as_bytes());
    // (cheap score, line number, line), the best CANDIDATES kept.
    let mut candidates: Vec<(f64, usize, &[u8])> = Vec::new();
    for (n, line) in lines_of(content).enumerate() {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            continue;
        }
        let set = pairs(&trimmed[..trimmed.len().min(SCORED)]);
        candidates.push((similarity(&wanted_set, &set), n + 1, line));
        if candidates.len() >= CANDIDATES * 4 {
            keep_best(&mut candidates);
        }
    }
    keep_best(&mut candidates);
    let mut best: Option<(f64, usize, &[u8])> = None;
    for (_, n, line) in candidates {
        let text = String::from_utf8_lossy(line.trim_ascii());
        let text: String = text.chars().take(COMPARED).collect();
        let score = strsim::normalized_levenshtein(&wanted, &text);
        if score > 0.0 && best.is_none_or(|(s, m, _)| score > s || score == s && n < m) {
            best = Some((score, n, line));
        }
    }
    let (_, n, line) = best?;
    Some(Field::Object(vec![
        ("line", Field::Int(i64::try_from(n).unwrap_or(i64::MAX))),
        ("text", Field::Text(cut(line, TEXT_MAX).to_vec())),
    ]))
}

/// The 1-based lines where the occurrences of `old` start (left to right,
/// without overlap), the first `LINES_MAX` of them.
pub fn lines(content: &[u8], old: &[u8]) -> Field {
    let mut numbers = Vec::new();
    let (mut line, mut counted) = (1usize, 0usize);
    for pos in memmem::find_iter(content, old).take(LINES_MAX) {
        line += memchr::memchr_iter(b'\n', &content[counted..pos]).count();
        counted = pos;
        numbers.push(Field::Int(i64::try_from(line).unwrap_or(i64::MAX)));
    }
    Field::List(numbers)
}

/// The lines of `content` without their line endings (`\n`, `\r\n`).
fn lines_of(content: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    let empty = content.is_empty();
    body.split(|&b| b == b'\n').filter(move |_| !empty).map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// The set of byte pairs of `text`, hashed into 256 bits.
fn pairs(text: &[u8]) -> [u64; 4] {
    let mut set = [0u64; 4];
    for w in text.windows(2) {
        let h = (usize::from(w[0]).wrapping_mul(31) ^ usize::from(w[1])) & 255;
        set[h / 64] |= 1 << (h % 64);
    }
    if let [only] = text {
        set[usize::from(*only) / 64] |= 1 << (only % 64);
    }
    set
}

/// Jaccard similarity of two pair sets.
fn similarity(a: &[u64; 4], b: &[u64; 4]) -> f64 {
    let both: u32 = a.iter().zip(b).map(|(x, y)| (x & y).count_ones()).sum();
    let either: u32 = a.iter().zip(b).map(|(x, y)| (x | y).count_ones()).sum();
    if either == 0 {
        0.0
    } else {
        f64::from(both) / f64::from(either)
    }
}

/// The best `CANDIDATES` by cheap score, earlier lines first among equals.
fn keep_best(candidates: &mut Vec<(f64, usize, &[u8])>) {
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    candidates.truncate(CANDIDATES);
}

/// At most `max` bytes of `text`, cut before a character that would cross
/// it.
fn cut(text: &[u8], max: usize) -> &[u8] {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && text[end] & 0xC0 == 0x80 {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closest_of(content: &str, old: &str) -> Option<(i64, String)> {
        match closest(content.as_bytes(), old)? {
            Field::Object(f) => match (&f[0].1, &f[1].1) {
                (Field::Int(n), Field::Text(t)) => {
                    Some((*n, String::from_utf8(t.clone()).unwrap()))
                }
                _ => None,
            },
            _ => None,
        }
    }

    #[test]
    fn the_closest_line_ignores_indentation_and_blank_lines() {
        let file = "fn main() {\n    let x = compute(1);\n    println!(\"{x}\");\n}\n";
        assert_eq!(
            closest_of(file, "\n  let x = compute(2);\n  more"),
            Some((2, "    let x = compute(1);".to_owned()))
        );
        assert_eq!(closest_of("", "x"), None);
        assert_eq!(closest_of("abc\n", "   \n"), None);
        assert_eq!(closest_of("a\r\nxyz\r\n", "xy"), Some((2, "xyz".to_owned())));
    }

    #[test]
    fn lines_counts_where_each_occurrence_starts() {
        assert_eq!(
            lines(b"ab\nab\n\nxab ab", b"ab"),
            Field::List(vec![Field::Int(1), Field::Int(2), Field::Int(4), Field::Int(4)])
        );
        let many = "x\n".repeat(100);
        let Field::List(l) = lines(many.as_bytes(), b"x") else { panic!() };
        assert_eq!(l.len(), LINES_MAX);
        assert_eq!(l[19], Field::Int(20));
    }

    #[test]
    fn cuts_fall_between_characters() {
        assert_eq!(cut("aé".as_bytes(), 2), b"a");
        assert_eq!(cut(b"abc", 5), b"abc");
    }
}
