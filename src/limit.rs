//! The output limit (CONTRACT §5): `IKIGAI_TOOLS_MAX_OUTPUT` bytes, 16 MiB by
//! default, `0` for none. Past it the first and the last half are kept and
//! one line between them says what was left out. Memory stays bounded by the
//! limit whatever is pushed: the middle is counted, not stored.

use std::collections::VecDeque;

pub const ENV_VAR: &str = "IKIGAI_TOOLS_MAX_OUTPUT";
pub const DEFAULT_MAX_OUTPUT: usize = 16 * 1024 * 1024;

/// The limit in force: `None` when there is none. A value that is not a
/// number is ignored in favour of the default rather than lifting the bound.
pub fn max_output() -> Option<usize> {
    parse_limit(std::env::var(ENV_VAR).ok().as_deref())
}

fn parse_limit(value: Option<&str>) -> Option<usize> {
    match value.map(str::trim).map(str::parse::<u64>) {
        Some(Ok(0)) => None,
        Some(Ok(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => Some(DEFAULT_MAX_OUTPUT),
    }
}

/// Collects output up to a limit, keeping its head and its tail.
#[derive(Debug)]
pub struct Bounded {
    limit: Option<usize>,
    head: Vec<u8>,
    /// Whether the head is complete: it ends at `head_cap`, or up to three
    /// bytes short of it so as not to end in the middle of a character.
    head_full: bool,
    tail: VecDeque<u8>,
    /// Bytes pushed in all.
    total: u64,
}

impl Bounded {
    pub fn new(limit: Option<usize>) -> Bounded {
        Bounded { limit, head: Vec::new(), head_full: false, tail: VecDeque::new(), total: 0 }
    }

    /// With the limit of the environment.
    pub fn from_env() -> Bounded {
        Bounded::new(max_output())
    }

    fn head_cap(&self) -> usize {
        self.limit.map_or(usize::MAX, |l| l - l / 2)
    }

    fn tail_cap(&self) -> usize {
        self.limit.map_or(0, |l| l / 2)
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head_full {
            self.push_tail(bytes);
            return;
        }
        let room = self.head_cap() - self.head.len();
        if bytes.len() <= room {
            self.head.reserve(bytes.len());
            self.head.extend_from_slice(bytes);
            return;
        }
        self.head.reserve_exact(room);
        self.head.extend_from_slice(&bytes[..room]);
        self.head_full = true;
        // The head and the tail are written to the answer apart: a
        // character cut between them would become two U+FFFD. Its start
        // goes to the tail, with the rest of it.
        let cut = incomplete_char_len(&self.head);
        if cut > 0 {
            let start = self.head.split_off(self.head.len() - cut);
            self.push_tail(&start);
        }
        self.push_tail(&bytes[room..]);
    }

    fn push_tail(&mut self, bytes: &[u8]) {
        let cap = self.tail_cap();
        if self.tail.capacity() < cap {
            // Once, and exactly: a deque left to grow by doubling can hold
            // twice what it keeps.
            self.tail.reserve_exact(cap - self.tail.len());
        }
        if bytes.len() >= cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// How many of the next `remaining` bytes would be left out whatever
    /// they are: once the head is full, only the last half-limit of the rest
    /// is kept. A reader that knows what remains (a regular file of known
    /// size) may seek past them and call `skip`.
    pub fn skippable(&self, remaining: u64) -> u64 {
        if self.limit.is_none() || (!self.head_full && self.head.len() < self.head_cap()) {
            return 0;
        }
        remaining.saturating_sub(self.tail_cap() as u64)
    }

    /// Counts `n` bytes as pushed and left out without seeing them.
    pub fn skip(&mut self, n: u64) {
        self.total += n;
        // Nothing after an omission may join the head (which may have
        // ended a few bytes short, not to cut a character).
        self.head_full = true;
        // What was kept of the tail no longer ends the output.
        self.tail.clear();
    }

    /// Appends what another `Bounded` with the same limit collected, as if
    /// its bytes had been pushed here one by one (grep collects each file
    /// apart, in parallel, and stitches them together in order).
    pub fn append(&mut self, other: Bounded) {
        debug_assert_eq!(self.limit, other.limit);
        let omitted = other.omitted();
        self.push(&other.head);
        if omitted > 0 {
            // `other` overflowed, so its head filled ours and its tail is
            // the whole of what our tail must keep.
            self.skip(omitted);
        }
        let (a, b) = other.tail.as_slices();
        self.push(a);
        self.push(b);
    }

    /// Bytes pushed in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Bytes kept (what the buffer holds in memory).
    pub fn kept(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Bytes that were pushed but are not kept.
    pub fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    /// The kept head (the part before any omission).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The output with the standard marker where bytes were left out.
    pub fn finish(self) -> Vec<u8> {
        self.finish_parts().concat()
    }

    /// The output with a marker of the caller's making (file_read says
    /// where to continue). The marker stands on a line of its own.
    pub fn finish_with(self, marker: impl FnOnce(u64) -> String) -> Vec<u8> {
        self.finish_parts_with(marker).concat()
    }

    /// The output as parts that follow one another (head, marker line,
    /// tail), written one after the other into the answer
    /// (`json::Field::Parts`): joining them would hold the output twice.
    pub fn finish_parts(self) -> Vec<Vec<u8>> {
        self.finish_parts_with(|omitted| format!("[... {omitted} bytes omitted ...]"))
    }

    /// `finish_parts` with a marker of the caller's making.
    pub fn finish_parts_with(self, marker: impl FnOnce(u64) -> String) -> Vec<Vec<u8>> {
        let omitted = self.omitted();
        let mut line = Vec::new();
        if omitted > 0 {
            if !self.head.ends_with(b"\n") {
                line.push(b'\n');
            }
            line.extend_from_slice(marker(omitted).as_bytes());
            // The marker ends its line, unless the tail starts with the
            // newline that does (no blank line after the marker).
            if self.tail.front() != Some(&b'\n') {
                line.push(b'\n');
            }
        }
        // In place: the deque's ring is rotated, not copied.
        vec![self.head, line, Vec::from(self.tail)]
    }
}

/// How many bytes at the end of `buf` are the start of a UTF-8 character
/// whose remaining bytes are missing (0 when it ends on a whole character,
/// or on bytes that are no UTF-8 at all).
fn incomplete_char_len(buf: &[u8]) -> usize {
    for back in 1..=buf.len().min(3) {
        let b = buf[buf.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead
        }
        let needed = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

/// Drops one final `\n` from output in parts (tools print lines, and the
/// last one needs no newline); whether there was one.
pub fn strip_final_newline(parts: &mut [Vec<u8>]) -> bool {
    match parts.iter_mut().rev().find(|p| !p.is_empty()) {
        Some(last) if last.ends_with(b"\n") => {
            last.pop();
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values() {
        assert_eq!(parse_limit(None), Some(DEFAULT_MAX_OUTPUT));
        assert_eq!(parse_limit(Some("0")), None);
        assert_eq!(parse_limit(Some("100")), Some(100));
        assert_eq!(parse_limit(Some("lots")), Some(DEFAULT_MAX_OUTPUT));
    }

    #[test]
    fn under_the_limit_everything_is_kept() {
        let mut b = Bounded::new(Some(10));
        b.push(b"hello");
        b.push(b"world");
        assert_eq!(b.finish(), b"helloworld");
    }

    #[test]
    fn past_the_limit_head_and_tail_are_kept() {
        let mut b = Bounded::new(Some(10));
        for chunk in [&b"0123"[..], b"4567", b"89ab", b"cdef"] {
            b.push(chunk);
        }
        assert_eq!(b.omitted(), 6);
        assert_eq!(b.finish(), b"01234\n[... 6 bytes omitted ...]\nbcdef");
    }

    #[test]
    fn a_tail_starting_with_a_newline_gives_no_blank_line() {
        let mut b = Bounded::new(Some(6));
        b.push(b"ab\ncdefg\nhi");
        assert_eq!(b.finish(), b"ab\n[... 5 bytes omitted ...]\nhi");
    }

    #[test]
    fn a_character_is_never_cut_between_head_and_tail() {
        // "é" is two bytes; the head's room ends between them.
        for chunks in
            [vec![&b"abc\xc3\xa9de"[..]], vec![b"abc\xc3", b"\xa9de"], vec![b"abc", b"\xc3\xa9de"]]
        {
            let mut b = Bounded::new(Some(8));
            for c in &chunks {
                b.push(c);
            }
            let parts = b.finish_parts();
            assert_eq!(parts, [b"abc".to_vec(), vec![], "éde".as_bytes().to_vec()], "{chunks:?}");
        }
    }

    #[test]
    fn incomplete_characters_are_found_at_the_end() {
        assert_eq!(incomplete_char_len(b"ab"), 0);
        assert_eq!(incomplete_char_len("aé".as_bytes()), 0);
        assert_eq!(incomplete_char_len(b"a\xc3"), 1);
        assert_eq!(incomplete_char_len(b"a\xe2\x9c"), 2);
        assert_eq!(incomplete_char_len(b"a\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_char_len(b"\x80\x80\x80"), 0);
    }

    #[test]
    fn the_final_newline_is_stripped_from_the_last_part_that_has_bytes() {
        let mut parts = vec![b"a\n".to_vec(), vec![], vec![]];
        assert!(strip_final_newline(&mut parts));
        assert_eq!(parts, [b"a".to_vec(), vec![], vec![]]);
        assert!(!strip_final_newline(&mut parts));
    }

    #[test]
    fn the_tail_is_allocated_once_at_its_size() {
        let mut b = Bounded::new(Some(1 << 20));
        for _ in 0..10_000 {
            b.push(&[b'y'; 1000]);
        }
        assert!(b.tail.capacity() < (1 << 19) + 64, "{}", b.tail.capacity());
    }

    #[test]
    fn one_huge_push_keeps_its_own_tail() {
        let mut b = Bounded::new(Some(4));
        b.push(b"abcdefghij");
        assert_eq!(b.finish(), b"ab\n[... 6 bytes omitted ...]\nij");
    }

    #[test]
    fn skipping_the_middle_gives_what_pushing_it_would() {
        let mut pushed = Bounded::new(Some(4));
        pushed.push(b"abcdefghij");
        let mut skipped = Bounded::new(Some(4));
        skipped.push(b"ab");
        assert_eq!(skipped.skippable(8), 6);
        skipped.skip(6);
        skipped.push(b"ij");
        assert_eq!(skipped.finish(), pushed.finish());
        assert_eq!(Bounded::new(Some(4)).skippable(100), 0, "head not full yet");
        assert_eq!(Bounded::new(None).skippable(100), 0, "no limit");
    }

    #[test]
    fn append_equals_pushing_everything() {
        let ascii: [&[u8]; 5] = [b"0123", b"456789abcdef", b"", b"gh", b"ijklmnopqrstuvwxyz"];
        // Characters that a head may not end inside, so that it ends short.
        let utf8: [&[u8]; 5] = [
            "0é2".as_bytes(),
            "45✓789ab".as_bytes(),
            b"",
            "gé".as_bytes(),
            "ij✓lmnopqrstu".as_bytes(),
        ];
        for (chunks, limit) in [ascii, utf8]
            .into_iter()
            .flat_map(|c| [None, Some(1), Some(5), Some(10), Some(16), Some(100)].map(|l| (c, l)))
        {
            for split in 0..=chunks.len() {
                let mut whole = Bounded::new(limit);
                for c in chunks {
                    whole.push(c);
                }
                let mut stitched = Bounded::new(limit);
                for part in [&chunks[..split], &chunks[split..]] {
                    let mut piece = Bounded::new(limit);
                    for c in part {
                        piece.push(c);
                    }
                    stitched.append(piece);
                }
                assert_eq!(stitched.total(), whole.total());
                assert_eq!(stitched.finish(), whole.finish(), "{limit:?} {split}");
            }
        }
    }

    #[test]
    fn no_limit_keeps_all() {
        let mut b = Bounded::new(None);
        b.push(&[7u8; 100_000]);
        assert_eq!(b.omitted(), 0);
        assert_eq!(b.finish().len(), 100_000);
    }
}
