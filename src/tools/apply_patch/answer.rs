//! apply_patch's answer: `output`, the list OpenAI's apply_patch prints
//! ("Success. Updated the following files:", then `A`, `M` and `D` lines:
//! the added files, then the modified, then the deleted, each in the
//! patch's order), and `diff`, bounded within what the output limit leaves.

use crate::json::Field;
use crate::limit::Bounded;
use crate::protocol::Answer;

use super::files::Change;

/// The answer to a patch applied (or, `dry_run`, that would be).
pub fn answer(changes: &[Change], diff: &[u8], dry_run: bool, limit: Option<usize>) -> Answer {
    let mut output = String::from(if dry_run {
        "Dry run, nothing was written. The patch would update the following files:\n"
    } else {
        "Success. Updated the following files:\n"
    });
    for kind in ['A', 'M', 'D'] {
        for (_, path) in changes.iter().filter(|(k, _)| *k == kind) {
            output.push(kind);
            output.push(' ');
            output.push_str(path);
            output.push('\n');
        }
    }
    let mut bounded = Bounded::for_answer(limit.map(|l| l / 2));
    bounded.push(output.as_bytes());
    let mut fields =
        vec![("output", Field::Parts(bounded.finish_parts())), ("diff", Field::Text(Vec::new()))];
    crate::tools::diff::fill_bounded(&mut fields, 1, diff, limit);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(answer: &Answer) -> String {
        let mut out = Vec::new();
        crate::json::write_object(&mut out, answer).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_list_is_added_then_modified_then_deleted() {
        let changes = [('D', "d".to_owned()), ('M', "m".to_owned()), ('A', "a".to_owned())];
        assert_eq!(
            text(&answer(&changes, b"", false, None)),
            r#"{"output":"Success. Updated the following files:\nA a\nM m\nD d\n","diff":""}"#
        );
    }
}
