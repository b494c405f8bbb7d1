//! A regular expression's syntax error told on one line (docs/SPEC.md,
//! "Error codes", `INVALID_PATTERN`): what is wrong, and the part of the
//! pattern it is about with its position, as glob's faults are told
//! (`unclosed '[' at position 3`). The regex crate's own layout puts a
//! caret under the pattern on the next line; folded onto one line the
//! caret points at nothing (`regex parse error: (unclosed ^ error: …`).

use regex_syntax::ast::Span;

/// The most characters of the pattern quoted.
const QUOTED_MAX: usize = 40;

/// `regex parse error: unclosed group: the '(' at position 0`: the error,
/// the characters it is about (cut to `QUOTED_MAX`) and where they start,
/// counted in characters from 0; `None` for an error of another kind.
pub(super) fn told(error: &regex_syntax::Error) -> Option<String> {
    let (kind, pattern, span) = match error {
        regex_syntax::Error::Parse(e) => (e.kind().to_string(), e.pattern(), e.span()),
        regex_syntax::Error::Translate(e) => (e.kind().to_string(), e.pattern(), e.span()),
        _ => return None,
    };
    Some(format!("regex parse error: {kind}{}", where_in(pattern, span)))
}

/// The part of `pattern` that `span` covers and where it starts; when it
/// covers nothing, the place and what follows it.
fn where_in(pattern: &str, span: &Span) -> String {
    let at = pattern.get(..span.start.offset).map_or(0, |before| before.chars().count());
    let covered = pattern.get(span.start.offset..span.end.offset).unwrap_or_default();
    if !covered.is_empty() {
        return format!(": the '{}' at position {at}", cut(covered));
    }
    match pattern.get(span.start.offset..).filter(|rest| !rest.is_empty()) {
        Some(rest) => format!(" at position {at}, before '{}'", cut(rest)),
        None => format!(" at the end of the pattern (position {at})"),
    }
}

/// `text`, cut to `QUOTED_MAX` characters (`…` told where it was cut).
fn cut(text: &str) -> String {
    let mut quoted: String = text.chars().take(QUOTED_MAX).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told_of(pattern: &str) -> String {
        let error = regex_syntax::Parser::new().parse(pattern).unwrap_err();
        told(&error).unwrap()
    }

    #[test]
    fn the_error_names_the_part_of_the_pattern_and_where_it_starts() {
        for (pattern, expected) in [
            ("(unclosed", "regex parse error: unclosed group: the '(' at position 0"),
            (
                r"(a)\1",
                r"regex parse error: backreferences are not supported: the '\1' at position 3",
            ),
            ("a{", "regex parse error: unclosed counted repetition: the '{' at position 1"),
            ("é*+[", "regex parse error: unclosed character class: the '[' at position 3"),
            (
                r"\p{Nope}",
                "regex parse error: Unicode property not found: the '\\p{Nope}' at position 0",
            ),
        ] {
            assert_eq!(told_of(pattern), expected, "{pattern}");
        }
    }

    #[test]
    fn a_long_part_is_cut_and_an_empty_one_told_by_its_place() {
        let long = format!(r"x\p{{{}}}", "a".repeat(100));
        let quoted = format!(r"\p{{{}…", "a".repeat(37));
        let expected =
            format!("regex parse error: Unicode property not found: the '{quoted}' at position 1");
        assert_eq!(told_of(&long), expected);
        assert_eq!(
            told_of("a|*"),
            "regex parse error: repetition operator missing expression at position 2, before '*'"
        );
        assert_eq!(
            told_of("(?P<"),
            "regex parse error: unclosed capture group name at the end of the pattern (position 4)"
        );
    }
}
