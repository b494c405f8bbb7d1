//! `line_numbers` (full profile): each line of the output prefixed with its
//! number in the file and a tab, as `cat -n` writes them (`"%6d\t"`:
//! right-aligned in six columns, a wider number widening the column). A
//! last line without a newline is numbered too; nothing after a final
//! newline is.

use std::io::Write;

pub struct Numbering {
    /// The number of the next line to begin.
    next: u64,
    /// Whether the next byte begins a line.
    at_start: bool,
}

impl Numbering {
    /// Numbering that starts with line `first`.
    pub fn new(first: u64) -> Numbering {
        Numbering { next: first, at_start: true }
    }

    /// Hands `bytes` to `emit` with the numbers put in, in pieces (a
    /// number, then the line up to and with its newline).
    pub fn push(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&[u8])) {
        while !bytes.is_empty() {
            if self.at_start {
                let mut prefix = [0u8; 32];
                let mut room = &mut prefix[..];
                // 20 digits and a tab at most: it always fits.
                let _ = write!(room, "{:6}\t", self.next);
                let len = 32 - room.len();
                emit(&prefix[..len]);
                self.next = self.next.saturating_add(1);
                self.at_start = false;
            }
            let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
            emit(&bytes[..end]);
            self.at_start = bytes[end - 1] == b'\n';
            bytes = &bytes[end..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(first: u64, pieces: &[&[u8]]) -> String {
        let mut n = Numbering::new(first);
        let mut out = Vec::new();
        for piece in pieces {
            n.push(piece, |b| out.extend_from_slice(b));
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn as_cat_n_numbers_them_whatever_the_pieces() {
        // `printf 'a\n\nb' | cat -n`
        assert_eq!(numbered(1, &[b"a\n\nb"]), "     1\ta\n     2\t\n     3\tb");
        assert_eq!(numbered(1, &[b"a", b"", b"\n", b"\nb"]), "     1\ta\n     2\t\n     3\tb");
        assert_eq!(numbered(1, &[b"a\n"]), "     1\ta\n", "nothing after a final newline");
        assert_eq!(numbered(1, &[]), "");
        assert_eq!(numbered(999_999, &[b"x\ny\n"]), "999999\tx\n1000000\ty\n");
        assert_eq!(numbered(u64::MAX, &[b"z"]), "18446744073709551615\tz");
    }
}
