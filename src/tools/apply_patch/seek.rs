//! Where a run of patch lines is in a file: the matching ladder of OpenAI's
//! apply_patch, searched forward from a position. Each rung is tried over
//! the whole range before the next, so an exact match further down wins
//! over a lenient one nearer:
//!
//! 1. exact;
//! 2. trailing whitespace ignored (a stray `\r` too);
//! 3. leading and trailing whitespace ignored;
//! 4. that, and Unicode punctuation read as ASCII: the dashes U+2010–2015
//!    and U+2212 as `-`, the quotes U+2018–201B as `'` and U+201C–201F as
//!    `"`, the spaces U+00A0, U+2002–200A, U+202F, U+205F and U+3000 as a
//!    space.

/// The first index at or after `start` where `pattern` matches `lines`.
/// With `eof`, the position that ends the file is tried first (the whole
/// ladder there), then the search goes on from `start` as without it. An
/// empty pattern matches at `start`; a pattern longer than the file
/// nowhere.
pub fn seek(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    let last = lines.len().checked_sub(pattern.len())?;
    if eof && last >= start {
        if let Some(found) =
            RUNGS.iter().find_map(|rung| search(lines, pattern, last..=last, *rung))
        {
            return Some(found);
        }
    }
    RUNGS.iter().find_map(|rung| search(lines, pattern, start..=last, *rung))
}

/// Whether `pattern` matches `lines` at `at` on some rung of the ladder:
/// on the last, which accepts whatever the others accept.
pub fn matches_at(lines: &[&str], pattern: &[String], at: usize) -> bool {
    lines.get(at..at + pattern.len()).is_some_and(|here| {
        here.iter().zip(pattern).all(|(line, wanted)| punctuation_normalised(line, wanted))
    })
}

/// How two lines may be equal, strictest first.
type Rung = fn(&str, &str) -> bool;

const RUNGS: [Rung; 4] = [exact, trailing_space_ignored, spaces_ignored, punctuation_normalised];

fn exact(file: &str, patch: &str) -> bool {
    file == patch
}

fn trailing_space_ignored(file: &str, patch: &str) -> bool {
    file.trim_end() == patch.trim_end()
}

fn spaces_ignored(file: &str, patch: &str) -> bool {
    file.trim() == patch.trim()
}

fn punctuation_normalised(file: &str, patch: &str) -> bool {
    file.trim().chars().map(ascii_like).eq(patch.trim().chars().map(ascii_like))
}

/// The ASCII character a typographic dash, quote or space stands for.
fn ascii_like(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

fn search(
    lines: &[&str],
    pattern: &[String],
    starts: std::ops::RangeInclusive<usize>,
    same: Rung,
) -> Option<usize> {
    starts.into_iter().find(|&i| {
        lines[i..i + pattern.len()].iter().zip(pattern).all(|(line, wanted)| same(line, wanted))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_match_is_found_from_start() {
        let lines = ["a", "b", "c", "b", "c"];
        assert_eq!(seek(&lines, &pattern(&["b", "c"]), 0, false), Some(1));
        assert_eq!(seek(&lines, &pattern(&["b", "c"]), 2, false), Some(3));
        assert_eq!(seek(&lines, &pattern(&["b", "c"]), 4, false), None);
    }

    #[test]
    fn trailing_whitespace_is_ignored_on_the_second_rung() {
        let lines = ["foo  ", "bar\t\r"];
        assert_eq!(seek(&lines, &pattern(&["foo", "bar"]), 0, false), Some(0));
        assert!(!exact("foo  ", "foo"));
    }

    #[test]
    fn both_ends_are_trimmed_on_the_third_rung() {
        let lines = ["  foo ", "\tbar"];
        assert_eq!(seek(&lines, &pattern(&["foo", "bar"]), 0, false), Some(0));
        assert!(!trailing_space_ignored("  foo", "foo"));
    }

    #[test]
    fn unicode_punctuation_is_normalised_on_the_last_rung() {
        let lines =
            ["let s = \u{201C}a\u{2014}b\u{201D};", "it\u{2019}s\u{00A0}ok", "x \u{2212} y"];
        let wanted = pattern(&["let s = \"a-b\";", "it's ok", "x - y"]);
        assert_eq!(seek(&lines, &wanted, 0, false), Some(0));
        assert!(!spaces_ignored(lines[0], &wanted[0]));
    }

    #[test]
    fn every_mapped_character_is_mapped() {
        for c in
            ['\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}']
        {
            assert_eq!(ascii_like(c), '-', "{c:?}");
        }
        for c in ['\u{2018}', '\u{2019}', '\u{201A}', '\u{201B}'] {
            assert_eq!(ascii_like(c), '\'', "{c:?}");
        }
        for c in ['\u{201C}', '\u{201D}', '\u{201E}', '\u{201F}'] {
            assert_eq!(ascii_like(c), '"', "{c:?}");
        }
        for c in
            ['\u{00A0}', '\u{2002}', '\u{2005}', '\u{200A}', '\u{202F}', '\u{205F}', '\u{3000}']
        {
            assert_eq!(ascii_like(c), ' ', "{c:?}");
        }
        assert_eq!(ascii_like('\u{2016}'), '\u{2016}');
        assert_eq!(ascii_like('\u{200B}'), '\u{200B}');
    }

    #[test]
    fn a_stricter_rung_further_down_wins_over_a_lenient_one_nearer() {
        let lines = ["  x", "x"];
        assert_eq!(seek(&lines, &pattern(&["x"]), 0, false), Some(1));
    }

    #[test]
    fn end_of_file_tries_the_end_first() {
        let lines = ["a", "end", "b", "end"];
        assert_eq!(seek(&lines, &pattern(&["end"]), 0, true), Some(3));
        assert_eq!(seek(&lines, &pattern(&["end"]), 0, false), Some(1));
    }

    #[test]
    fn end_of_file_falls_back_to_the_search_from_start() {
        let lines = ["a", "end", "b"];
        assert_eq!(seek(&lines, &pattern(&["end"]), 0, true), Some(1));
    }

    #[test]
    fn end_of_file_uses_the_whole_ladder_at_the_end_first() {
        let lines = ["end", "b", " end "];
        assert_eq!(seek(&lines, &pattern(&["end"]), 0, true), Some(2));
    }

    #[test]
    fn end_of_file_never_matches_before_start() {
        let lines = ["a", "b"];
        assert_eq!(seek(&lines, &pattern(&["b"]), 2, true), None);
    }

    #[test]
    fn an_empty_pattern_matches_at_start() {
        assert_eq!(seek(&["a"], &[], 1, false), Some(1));
        assert_eq!(seek(&[], &[], 0, true), Some(0));
    }

    #[test]
    fn a_pattern_longer_than_the_file_matches_nowhere() {
        assert_eq!(seek(&["a"], &pattern(&["a", "b"]), 0, false), None);
        assert_eq!(seek(&["a"], &pattern(&["a", "b"]), 0, true), None);
    }

    #[test]
    fn matches_at_accepts_what_any_rung_accepts() {
        let lines = ["a", "b  ", "  c", "\u{2014}d\u{00A0}"];
        for (at, wanted) in [(0, "a"), (1, "b"), (2, "c"), (3, "-d")] {
            assert!(matches_at(&lines, &pattern(&[wanted]), at), "{wanted}");
            assert_eq!(seek(&lines, &pattern(&[wanted]), at, false), Some(at));
        }
        assert!(!matches_at(&lines, &pattern(&["x"]), 0));
        assert!(!matches_at(&lines, &pattern(&["d", "e"]), 3));
    }

    #[test]
    fn a_start_past_the_end_matches_nothing() {
        assert_eq!(seek(&["a", "b"], &pattern(&["a"]), 5, false), None);
    }
}
