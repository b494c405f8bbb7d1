//! A provider's text as a model reads it: Brave marks its snippets up
//! (`<strong>`, `&amp;`), SearXNG's may hold new lines. Read as HTML (tags
//! dropped, entities decoded, white space folded), and cut to a bound
//! between characters, `…` telling so.

/// `text` without tags, its entities decoded and its white space folded,
/// read by web_fetch's HTML parser.
pub fn plain(text: &str) -> String {
    super::super::web_fetch::html_text(text)
}

/// `text` in at most `max` bytes: whole, or cut between characters with
/// `…` at the end (within the bound).
pub fn cut(text: &str, max: usize) -> String {
    const MORE: &str = "…";
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub(MORE.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MORE}", text[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_falls_between_characters_and_says_so() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééééé", 8), "éé…");
        assert!(cut("ééééé", 8).len() <= 8);
        assert_eq!(cut("abc defgh", 7), "abc…");
    }
}
