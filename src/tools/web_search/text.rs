//! A provider's text as a model reads it: Brave marks its snippets up
//! (`<strong>`, `&amp;`), SearXNG's may hold new lines. Tags are dropped,
//! the common entities decoded, white space folded, and a text cut to a
//! bound between characters, `…` telling so.

/// `text` without tags, its entities decoded and its white space folded.
pub fn plain(text: &str) -> String {
    let mut untagged = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        untagged.push_str(&rest[..open]);
        // A `<` that opens no tag (`a < b`) stays.
        let tag = &rest[open..];
        match tag.find('>') {
            Some(close) if tag[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/') => {
                rest = &tag[close + 1..];
            }
            _ => {
                untagged.push('<');
                rest = &tag[1..];
            }
        }
    }
    untagged.push_str(rest);
    decoded(&untagged).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The named entities search snippets carry, and numeric ones.
fn decoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let entity = after.find(';').filter(|&end| end <= 8).map(|end| (&after[..end], end));
        match entity.and_then(|(name, end)| Some((char_of(name)?, end))) {
            Some((c, end)) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn char_of(entity: &str) -> Option<char> {
    let number =
        |digits: &str, radix| u32::from_str_radix(digits, radix).ok().and_then(char::from_u32);
    match entity {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => match entity.strip_prefix('#')? {
            hex if hex.starts_with(['x', 'X']) => number(&hex[1..], 16),
            decimal => number(decimal, 10),
        },
    }
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
    fn tags_go_entities_are_decoded_and_space_is_folded() {
        assert_eq!(
            plain("The <strong>Rust</strong> &amp; C&#43;&#x2B;\n\n book &lt;3 a < b &foo; &"),
            "The Rust & C++ book <3 a < b &foo; &"
        );
        assert_eq!(plain("<b>é</b>&nbsp;x"), "é x");
    }

    #[test]
    fn a_cut_falls_between_characters_and_says_so() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééééé", 8), "éé…");
        assert!(cut("ééééé", 8).len() <= 8);
        assert_eq!(cut("abc defgh", 7), "abc…");
    }
}
