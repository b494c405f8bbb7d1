//! A page of a converted text's lines (docs/TOOLS.md, "web_fetch"), as
//! upstream ikigai's web_fetch pages: `offset` is the first line (1-based,
//! 0 counts as 1), `limit` how many. What is cut, by `limit` or by the
//! output limit, is cut after whole lines, from the start (a page that the
//! next call continues: `Bounded::for_answer_from_start`), and both say
//! where to continue the same way: `next_offset` and a marker line
//! (`limit::marker`).

use crate::json::Field;
use crate::limit::{marker, Bounded};

/// One page of `text`.
pub struct Page {
    /// The lines shown, and the marker line when cut.
    pub output: Vec<Vec<u8>>,
    /// The text's lines in all.
    pub total_lines: u64,
    /// The first line not shown, when some after the page were not.
    pub next_offset: Option<u64>,
}

impl Page {
    /// Lines `offset`.. of `text`, `limit` of them, within `budget` (the
    /// output's share of the answer, `Context::answer_limit`).
    pub fn of(text: &[u8], offset: Option<u64>, limit: Option<u64>, budget: Option<usize>) -> Page {
        let total_lines = count_lines(text);
        let first = offset.unwrap_or(1).max(1);
        let start = line_start(text, first);
        let end = match limit {
            Some(n) => line_start(&text[start..], n.saturating_add(1)) + start,
            None => text.len(),
        };
        let mut out = Bounded::for_answer_from_start(budget);
        out.push(&text[start..end]);
        let mut next_offset = None;
        let mut output = out.finish_parts_with(|cut| {
            let cut = cut.numbered_from(first);
            next_offset = Some(cut.next_line());
            marker::read_on(&cut)
        });
        if next_offset.is_none() && end < text.len() {
            // Cut by `limit` alone: the first line after the page.
            let next = first.saturating_add(limit.unwrap_or(0));
            next_offset = Some(next);
            let mut line = Vec::new();
            if !text[..end].ends_with(b"\n") {
                line.push(b'\n');
            }
            line.extend(marker::page_on((text.len() - end) as u64, next).into_bytes());
            output.push(line);
        }
        if start == text.len() && first > 1 && total_lines > 0 {
            let past = format!("[offset {first} is past the end: the page has {total_lines} lines]");
            output.push(past.into_bytes());
        }
        Page { output, total_lines, next_offset }
    }

    /// The answer's fields: `output`, and the ones that follow the page's
    /// own (`total_lines`, `next_offset`), which `fields` gives.
    pub fn fields(&self) -> Vec<(&'static str, Field)> {
        let mut fields = vec![("total_lines", int(self.total_lines))];
        if let Some(next) = self.next_offset {
            fields.push(("next_offset", int(next)));
        }
        fields
    }
}

fn int(n: u64) -> Field {
    Field::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// Lines as an editor counts them: a last line without its newline counts.
fn count_lines(text: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', text).count() as u64;
    newlines + u64::from(!text.is_empty() && !text.ends_with(b"\n"))
}

/// Where line `n` (1-based) of `text` starts; the end when it has fewer.
fn line_start(text: &[u8], n: u64) -> usize {
    if n <= 1 {
        return 0;
    }
    let skip = usize::try_from(n - 2).unwrap_or(usize::MAX);
    memchr::memchr_iter(b'\n', text).nth(skip).map_or(text.len(), |at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(page: &Page) -> String {
        String::from_utf8(page.output.concat()).unwrap()
    }

    #[test]
    fn offset_and_limit_page_by_lines_and_say_where_to_continue() {
        let text = b"a\nb\nc\nd";
        let p = Page::of(text, Some(2), Some(2), None);
        assert_eq!(shown(&p), "b\nc\n[... 1 bytes omitted; continue with offset=4 ...]");
        assert_eq!((p.total_lines, p.next_offset), (4, Some(4)));
        let p = Page::of(text, Some(3), None, None);
        assert_eq!((shown(&p).as_str(), p.next_offset), ("c\nd", None));
        let p = Page::of(text, Some(0), Some(9), None);
        assert_eq!((shown(&p).as_str(), p.next_offset), ("a\nb\nc\nd", None));
        let p = Page::of(text, Some(9), None, None);
        assert_eq!(shown(&p), "[offset 9 is past the end: the page has 4 lines]");
    }

    #[test]
    fn the_output_limit_cuts_after_whole_lines_and_says_the_next_offset() {
        let text = "line of text\n".repeat(100);
        let p = Page::of(text.as_bytes(), None, None, Some(400 + 40));
        // 40 bytes hold three lines of 13.
        assert_eq!(p.next_offset, Some(4));
        let shown = shown(&p);
        assert!(shown.starts_with("line of text\nline of text\nline of text\n[... "), "{shown}");
        assert!(shown.ends_with("; continue with offset=4 (limit=N for N lines) ...]\n"), "{shown}");
    }
}
