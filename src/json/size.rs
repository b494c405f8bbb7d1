//! How many bytes text takes once written as a JSON string by this module's
//! writer: what the output limit counts (docs/SPEC.md, "Output limit"), since that is what a
//! host reads. A newline takes two bytes, a control byte six, and a
//! sequence that is not UTF-8 one U+FFFD (three bytes).
//!
//! Text is measured in units, the pieces lossy decoding reads one at a
//! time: a character, or a sequence that is not one (replaced as a whole).
//! Cut only between units, text written in parts takes exactly the sum of
//! the sizes of the parts, and no cut makes a U+FFFD.

use super::ESCAPES;

/// One unit at the start of some bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// Its length in bytes (1 to 4).
    pub len: usize,
    /// Its size in a JSON string.
    pub size: usize,
    /// False when the bytes ended in the middle of a character: more bytes
    /// may complete it. (Written as it is, it is one U+FFFD.)
    pub complete: bool,
}

/// The size of one ASCII byte in a JSON string.
#[inline]
pub fn ascii_size(b: u8) -> usize {
    match ESCAPES[usize::from(b)].1 {
        0 => 1,
        n => usize::from(n),
    }
}

/// Whether `b` can only continue a character (10xxxxxx).
#[inline]
pub fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// The unit `bytes` starts with (`bytes` not empty), as the standard
/// library's lossy decoding cuts it: a character, or the longest start of
/// one that goes wrong (one U+FFFD), or a lone byte that starts none.
pub fn unit(bytes: &[u8]) -> Unit {
    let lead = bytes[0];
    if lead < 0x80 {
        return Unit { len: 1, size: ascii_size(lead), complete: true };
    }
    let needed = match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return Unit { len: 1, size: REPLACEMENT_SIZE, complete: true },
    };
    let mut len = 1;
    while len < needed {
        let Some(&b) = bytes.get(len) else {
            return Unit { len, size: REPLACEMENT_SIZE, complete: false };
        };
        // The second byte's range depends on the lead (no overlong forms,
        // no surrogates, nothing past U+10FFFF).
        let range = match (len, lead) {
            (1, 0xE0) => 0xA0..=0xBF,
            (1, 0xED) => 0x80..=0x9F,
            (1, 0xF0) => 0x90..=0xBF,
            (1, 0xF4) => 0x80..=0x8F,
            _ => 0x80..=0xBF,
        };
        if !range.contains(&b) {
            return Unit { len, size: REPLACEMENT_SIZE, complete: true };
        }
        len += 1;
    }
    Unit { len, size: len, complete: true }
}

/// U+FFFD in UTF-8.
const REPLACEMENT_SIZE: usize = 3;

/// The size of `bytes` written alone as a JSON string, quotes left out.
pub fn escaped_len(mut bytes: &[u8]) -> usize {
    // The standard library's validation is the fast one (`utf8_chunks`
    // decodes a byte at a time).
    let mut total = 0;
    loop {
        match std::str::from_utf8(bytes) {
            Ok(valid) => return total + valid.len() + escape_extra(valid.as_bytes()),
            Err(e) => {
                let valid = &bytes[..e.valid_up_to()];
                total += valid.len() + escape_extra(valid) + REPLACEMENT_SIZE;
                // A sequence cut off at the end is one replacement too.
                let invalid = e.error_len().unwrap_or(bytes.len() - valid.len());
                bytes = &bytes[valid.len() + invalid..];
            }
        }
    }
}

/// What escaping adds to valid UTF-8 (its bytes >= 0x80 pass as they are):
/// 5 for a control byte (`\u0001`), but 1 for those with a short escape
/// (`\n`, `\t` …), and 1 for `"` and `\`.
pub fn escape_extra(s: &[u8]) -> usize {
    // Comparisons only, summed into 16-bit lanes: the compiler turns this
    // into vector code (a table lookup would be a byte at a time).
    let mut total = 0usize;
    for block in s.chunks(4096) {
        let mut sum = 0u16;
        for &b in block {
            let control = u16::from(b < 0x20);
            let short = u16::from(matches!(b, 0x08 | b'\t' | b'\n' | 0x0c | b'\r'));
            let quoted = u16::from(b == b'"' || b == b'\\');
            sum = sum.wrapping_add(control * 5 - short * 4 + quoted);
        }
        total += usize::from(sum);
    }
    total
}

/// The first unit boundary at or after `at` (< `bytes.len()`), where
/// `bytes` starts at a unit boundary. Any byte but a continuation byte
/// starts a unit, and a unit is at most four bytes long: decoding starts
/// at the last such byte at most three back.
pub fn boundary_at_or_after(bytes: &[u8], at: usize) -> usize {
    let lowest = at.saturating_sub(3);
    let Some(start) = (lowest..=at).rev().find(|&i| !is_continuation(bytes[i])) else {
        // Continuation bytes all the way: none belongs to a character
        // begun before, so `at` is a (lone, invalid) unit of its own.
        return at;
    };
    let mut i = start;
    while i < at {
        i += unit(&bytes[i..]).len;
    }
    i
}

/// Test text from a seed: `pieces` strung together, chosen by a small
/// linear congruential generator, until `len` bytes or more. Shared by the
/// tests of the answer's size and of the output limit.
#[cfg(test)]
pub(crate) fn mixed_of(pieces: &[&[u8]], seed: u64, len: usize) -> Vec<u8> {
    let mut seed = seed;
    let mut text = Vec::new();
    while text.len() < len {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        text.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written_len(bytes: &[u8]) -> usize {
        let mut out = Vec::new();
        super::super::write_str(&mut out, bytes).unwrap();
        out.len() - 2
    }

    /// Bytes of every kind: ASCII to escape or not, whole and cut
    /// characters of each length, lone and invalid bytes.
    fn mixed(seed: u64, len: usize) -> Vec<u8> {
        let pieces: [&[u8]; 14] = [
            b"ab",
            b"\n",
            b"\"",
            b"\x01",
            "é".as_bytes(),
            "✓".as_bytes(),
            "𝄞".as_bytes(),
            b"\xf0\x9d",
            b"\xff",
            b"\xe2\x9c",
            b"\x80",
            b"\xed\xa0\x80",
            b"\xc0\xaf",
            b"\xf4\x90",
        ];
        mixed_of(&pieces, seed, len)
    }

    #[test]
    fn the_size_is_what_the_writer_writes() {
        for seed in 0..200 {
            let text = mixed(seed, seed as usize % 50);
            assert_eq!(escaped_len(&text), written_len(&text), "{text:?}");
        }
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(escaped_len(&all), written_len(&all));
    }

    #[test]
    fn units_add_up_to_the_size_and_cut_nothing() {
        for seed in 0..200 {
            let text = mixed(seed, 60);
            let (mut at, mut size) = (0, 0);
            while at < text.len() {
                let u = unit(&text[at..]);
                // Each unit written alone takes its size: cutting before and
                // after it changes nothing.
                assert_eq!(written_len(&text[at..at + u.len]), u.size, "{:?}", &text[at..]);
                size += u.size;
                at += u.len;
            }
            assert_eq!(size, escaped_len(&text));
            // Every boundary found from an arbitrary point is one of these.
            for from in 0..text.len() {
                let b = boundary_at_or_after(&text, from);
                assert!(b >= from);
                assert_eq!(
                    escaped_len(&text[..b]) + escaped_len(&text[b..]),
                    escaped_len(&text),
                    "{from} {b} {text:?}"
                );
            }
        }
    }

    #[test]
    fn a_cut_character_is_incomplete() {
        assert_eq!(unit(b"\xe2\x9c"), Unit { len: 2, size: 3, complete: false });
        assert_eq!(unit(b"\xe2\x9cx"), Unit { len: 2, size: 3, complete: true });
        assert_eq!(unit("✓".as_bytes()), Unit { len: 3, size: 3, complete: true });
        assert_eq!(unit(b"\x00"), Unit { len: 1, size: 6, complete: true });
        assert_eq!(unit(b"\xed\xa0"), Unit { len: 1, size: 3, complete: true });
    }
}
