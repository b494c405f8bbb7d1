//! What the full profile tells of the whole file, gathered as its bytes go
//! by, whatever part of it is answered: its sha256 (the version file_edit
//! and file_write name as `expected_sha256`) and its number of lines.

use crate::fs::digest::Sha256Hex;

pub struct Tally {
    sha256: Sha256Hex,
    newlines: u64,
    last: Option<u8>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally { sha256: Sha256Hex::new(), newlines: 0, last: None }
    }

    pub fn add(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.sha256.update(bytes);
            self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
            self.last = Some(last);
        }
    }

    /// The number of lines (a last line without a newline counts) and the
    /// sha256.
    pub fn finish(self) -> (u64, String) {
        let unended = self.last.is_some_and(|b| b != b'\n');
        (self.newlines + u64::from(unended), self.sha256.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pieces: &[&[u8]]) -> u64 {
        let mut tally = Tally::new();
        pieces.iter().for_each(|p| tally.add(p));
        tally.finish().0
    }

    #[test]
    fn a_last_line_without_a_newline_counts() {
        assert_eq!(lines(&[]), 0);
        assert_eq!(lines(&[b"", b""]), 0);
        assert_eq!(lines(&[b"a"]), 1);
        assert_eq!(lines(&[b"a\n"]), 1);
        assert_eq!(lines(&[b"a\n", b""]), 1);
        assert_eq!(lines(&[b"a\nb", b"\n\n"]), 3);
        assert_eq!(lines(&[b"\n"]), 1);
    }
}
