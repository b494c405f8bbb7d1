//! Where a run of patch lines is in a file: the matching ladder of OpenAI's
//! apply_patch (exact, then trailing whitespace ignored, then both ends
//! trimmed, then Unicode punctuation normalised), searched forward.
#![allow(dead_code)] // patch-tool is not using these yet

/// The first index at or after `start` where `pattern` matches `lines`
/// (each rung of the ladder tried over the whole range before the next);
/// with `eof`, the end of the file is tried first. An empty pattern
/// matches at `start`.
pub fn seek(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
    let _ = (lines, pattern, start, eof);
    None
}
