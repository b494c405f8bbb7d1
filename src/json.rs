//! Writing JSON strings straight from bytes. Tool output is whatever a
//! command printed or a file held: bytes that are not UTF-8 become U+FFFD and
//! control bytes (NUL included) are escaped, so every answer is valid JSON
//! and nothing is cut off at a NUL. One pass, no intermediate `String`.

use std::io::{self, Write};

pub mod size;

const REPLACEMENT: &str = "\u{FFFD}";

/// Whether a byte of valid UTF-8 must be escaped: a control byte, `"` or `\`.
/// Bytes of multi-byte characters are all >= 0x80 and pass through.
#[cfg(any(not(target_arch = "x86_64"), test))]
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Escaped text is built in blocks of this much input and written a block
/// at a time: few, large writes, whatever the text.
const BLOCK: usize = 64 * 1024;
/// The most bytes one input byte becomes (`\u001f`).
const MAX_ESCAPE: usize = 6;

/// Writes `bytes` as one JSON string literal, quotes included.
///
/// A block at a time: validated as UTF-8 (the standard library's fast
/// check), escaped into a buffer, written. An invalid sequence becomes one
/// U+FFFD, as `String::from_utf8_lossy` has it; a character cut by the end
/// of a block is left for the next block.
pub fn write_str<W: Write + ?Sized>(w: &mut W, bytes: &[u8]) -> io::Result<()> {
    write_str_parts(w, &[bytes])
}

/// Writes parts that follow one another as one JSON string literal. Each
/// part is decoded on its own: a character cut between two parts becomes
/// U+FFFD (`limit::Bounded` never cuts one).
pub fn write_str_parts<W: Write + ?Sized, P: AsRef<[u8]>>(
    w: &mut W,
    parts: &[P],
) -> io::Result<()> {
    let len: usize = parts.iter().map(|p| p.as_ref().len()).sum();
    let mut out = Vec::with_capacity(len.min(BLOCK) * MAX_ESCAPE + 8);
    out.push(b'"');
    for part in parts {
        escape_part(w, &mut out, part.as_ref())?;
    }
    out.push(b'"');
    w.write_all(&out)
}

/// Escapes `bytes` into `out`, writing `out` to `w` whenever a block's worth
/// has gathered.
fn escape_part<W: Write + ?Sized>(w: &mut W, out: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let block = &rest[..rest.len().min(BLOCK)];
        let (valid, skip) = match std::str::from_utf8(block) {
            Ok(_) => (block.len(), 0),
            Err(e) => match e.error_len() {
                Some(invalid) => (e.valid_up_to(), invalid),
                // Cut off at the end of the text: one replacement for it.
                None if block.len() == rest.len() => {
                    (e.valid_up_to(), rest.len() - e.valid_up_to())
                }
                // Cut off by the end of the block: the next block has it.
                None => (e.valid_up_to(), 0),
            },
        };
        escape_into(out, &block[..valid]);
        if skip > 0 {
            out.extend_from_slice(REPLACEMENT.as_bytes());
        }
        rest = &rest[valid + skip..];
        if out.len() >= BLOCK {
            w.write_all(out)?;
            out.clear();
        }
    }
    Ok(())
}

/// What a byte that needs escaping becomes, padded to eight bytes, and how
/// many of them count (zero for the bytes that need none).
static ESCAPES: [([u8; 8], u8); 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut table = [([0u8; 8], 0u8); 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = match b as u8 {
            b'\n' => (*b"\\n\0\0\0\0\0\0", 2),
            b'\r' => (*b"\\r\0\0\0\0\0\0", 2),
            b'\t' => (*b"\\t\0\0\0\0\0\0", 2),
            0x08 => (*b"\\b\0\0\0\0\0\0", 2),
            0x0c => (*b"\\f\0\0\0\0\0\0", 2),
            _ => ([b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 0xf], 0, 0], 6),
        };
        b += 1;
    }
    table[b'"' as usize] = (*b"\\\"\0\0\0\0\0\0", 2);
    table[b'\\' as usize] = (*b"\\\\\0\0\0\0\0\0", 2);
    table
};

/// Appends valid UTF-8, escaped: ASCII runs and multi-byte characters pass
/// through as they are; only `"`, `\` and control bytes are rewritten.
///
/// Sixteen bytes at a time with SSE2 (part of every x86_64): each block of
/// sixteen is stored whole, then the output end moves past the bytes that
/// need no escape; an escape is stored eight bytes wide and counted by its
/// length. No call and no branch per byte, and one capacity check per call.
#[cfg(target_arch = "x86_64")]
fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_storeu_si128,
    };
    // Every input byte gives at most MAX_ESCAPE output bytes, so after `i`
    // input bytes at most `MAX_ESCAPE * i` are written; the widest store
    // starts there and is 16 bytes: this is room for all of them.
    out.reserve(s.len() * MAX_ESCAPE + 16);
    let mut i = 0;
    let mut written = 0;
    // SAFETY: SSE2 is always present on x86_64. Loads read the 16 bytes at
    // `i` inside `s`. Stores write at most 16 bytes at `written` <=
    // MAX_ESCAPE * i, inside the room reserved above; `set_len` covers only
    // bytes written (a store's bytes past `written` are overwritten or left
    // outside the length).
    unsafe {
        let dst = out.as_mut_ptr().add(out.len());
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let last_control = _mm_set1_epi8(0x1f);
        while i + 16 <= s.len() {
            let x = _mm_loadu_si128(s.as_ptr().add(i).cast());
            _mm_storeu_si128(dst.add(written).cast(), x);
            // x <= 0x1f, unsigned: min(x, 0x1f) == x.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(x, last_control), x);
            let special = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash));
            let mask = _mm_movemask_epi8(_mm_or_si128(control, special)) as u32;
            if mask == 0 {
                i += 16;
                written += 16;
                continue;
            }
            let plain = mask.trailing_zeros() as usize;
            i += plain;
            written += plain;
            let (text, len) = &ESCAPES[usize::from(s[i])];
            std::ptr::copy_nonoverlapping(text.as_ptr(), dst.add(written), 8);
            written += usize::from(*len);
            i += 1;
        }
        for &b in &s[i..] {
            let (text, len) = &ESCAPES[usize::from(b)];
            if *len == 0 {
                *dst.add(written) = b;
                written += 1;
            } else {
                std::ptr::copy_nonoverlapping(text.as_ptr(), dst.add(written), 8);
                written += usize::from(*len);
            }
        }
        out.set_len(out.len() + written);
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    escape_into_portable(out, s)
}

/// Appends valid UTF-8, escaped: ASCII runs and multi-byte characters pass
/// through as they are; only `"`, `\` and control bytes are rewritten.
/// Where SSE2 is, only the tests use it, to check the fast path against.
#[cfg(any(not(target_arch = "x86_64"), test))]
fn escape_into_portable(out: &mut Vec<u8>, s: &[u8]) {
    let mut start = 0;
    while start < s.len() {
        let i = start + next_escape(&s[start..]);
        out.extend_from_slice(&s[start..i]);
        let Some(&b) = s.get(i) else { break };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
        start = i + 1;
    }
}

/// The index of the first byte that needs escaping, or `s.len()`. Eight
/// bytes at a time: in each word, the lowest flagged byte is exact (a
/// borrow can only flag bytes above a true match), which is all we need.
#[cfg(any(not(target_arch = "x86_64"), test))]
#[inline]
fn next_escape(s: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut words = s.chunks_exact(8);
    let mut i = 0;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
        let flagged = below_space
            | zero_byte(x ^ (ONES * u64::from(b'"')))
            | zero_byte(x ^ (ONES * u64::from(b'\\')));
        if flagged != 0 {
            return i + (flagged.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    for &b in words.remainder() {
        if needs_escape(b) {
            return i;
        }
        i += 1;
    }
    i
}

/// "a string", "an array" …: what a JSON value is, for messages.
pub fn kind_of(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON value of an answer's field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// Text from the outside world, written lossily (see module doc).
    Text(Vec<u8>),
    /// Text in parts that follow one another (the output limit's head,
    /// marker and tail), written as one string without joining them first.
    /// A part should not end inside a character: each is decoded alone.
    Parts(Vec<Vec<u8>>),
    Int(i64),
    Bool(bool),
    /// An array (the extra fields of an error envelope: file_edit's `lines`).
    List(Vec<Field>),
    /// An object, keys in the order given (file_edit's `closest`, file_read's
    /// `image`).
    Object(Vec<(&'static str, Field)>),
}

/// One compact JSON object with its keys in the order given.
pub fn write_object<W: Write + ?Sized>(w: &mut W, fields: &[(&str, Field)]) -> io::Result<()> {
    w.write_all(b"{")?;
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        write_str(w, key.as_bytes())?;
        w.write_all(b":")?;
        write_field(w, value)?;
    }
    w.write_all(b"}")
}

/// How many bytes `write_object` writes for `fields`, counted, not kept:
/// what an answer takes against the output limit.
pub fn object_len(fields: &[(&str, Field)]) -> usize {
    /// A writer that only counts.
    struct Counted(usize);
    impl Write for Counted {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counted = Counted(0);
    // Counting cannot fail.
    let _ = write_object(&mut counted, fields);
    counted.0
}

fn write_field<W: Write + ?Sized>(w: &mut W, value: &Field) -> io::Result<()> {
    match value {
        Field::Text(bytes) => write_str(w, bytes),
        Field::Parts(parts) => write_str_parts(w, parts),
        Field::Int(n) => write!(w, "{n}"),
        Field::Bool(b) => write!(w, "{b}"),
        Field::List(items) => {
            w.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_field(w, item)?;
            }
            w.write_all(b"]")
        }
        Field::Object(fields) => write_object(w, fields),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        write_str(&mut out, bytes).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_quotes_backslashes_and_controls() {
        assert_eq!(enc(b"a\"b\\c\n\t\r\x08\x0c"), r#""a\"b\\c\n\t\r\b\f""#);
        assert_eq!(enc(b"nul\0here\x1f"), r#""nul\u0000here\u001f""#);
    }

    #[test]
    fn the_word_scan_finds_every_byte_to_escape() {
        // Each position in and across 8-byte words, amid neighbours close
        // to the bytes searched for or with the high bit set.
        let fillers = [b' ', b'!', b'[', b']', b'~', 0x80, 0xff, b'a'];
        for special in (0u8..0x20).chain([b'"', b'\\']) {
            for len in 1..40 {
                for at in 0..len {
                    for &fill in &fillers {
                        let mut s = vec![fill; len];
                        s[at] = special;
                        assert_eq!(next_escape(&s), at, "{special:#x} at {at} of {len}");
                    }
                }
            }
        }
        for &fill in &fillers {
            assert_eq!(next_escape(&[fill; 39]), 39);
        }
    }

    #[test]
    fn the_block_escaper_agrees_with_the_byte_escaper() {
        // Random valid UTF-8 runs of every length, dense and sparse in
        // bytes to escape, appended to a buffer that already holds text.
        let alphabet: [&str; 10] = ["a", "b", "\n", "\"", "\\", "\u{0}", "\u{1f}", "é", "✓", "\t"];
        let mut seed = 99u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for len in 0..300 {
            let sparse = next() % 2 == 0;
            let mut text = String::new();
            while text.len() < len {
                let pick = next() % alphabet.len();
                text.push_str(if sparse && next() % 8 != 0 { "x" } else { alphabet[pick] });
            }
            let mut fast = b"prefix".to_vec();
            escape_into(&mut fast, text.as_bytes());
            let mut slow = b"prefix".to_vec();
            escape_into_portable(&mut slow, text.as_bytes());
            assert_eq!(fast, slow, "{text:?}");
        }
    }

    #[test]
    fn long_text_is_escaped_like_short_text() {
        let line = "tab\there \"q\" back\\slash é ✓ \u{1}end\n";
        let text = line.repeat(20_000);
        let back: String = serde_json::from_str(&enc(text.as_bytes())).unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_character() {
        assert_eq!(enc(b"ok\xff\xfe end"), "\"ok\u{FFFD}\u{FFFD} end\"");
        assert_eq!(enc("é✓".as_bytes()), "\"é✓\"");
        // A truncated multi-byte sequence at the end.
        assert_eq!(enc(b"a\xe2\x9c"), "\"a\u{FFFD}\"");
        // A character cut by the end of a block is whole in the output.
        let mut text = vec![b'a'; BLOCK - 1];
        text.extend_from_slice("é✓".as_bytes());
        text.extend_from_slice(b"\xff");
        let expected = format!("\"{}é✓\u{FFFD}\"", "a".repeat(BLOCK - 1));
        assert_eq!(enc(&text), expected);
    }

    #[test]
    fn every_byte_string_gives_valid_json() {
        let all: Vec<u8> = (0..=255u8).collect();
        let text = enc(&all);
        let back: String = serde_json::from_str(&text).unwrap();
        assert!(back.starts_with("\0\u{1}"));
        assert_eq!(back.chars().filter(|&c| c == '\u{FFFD}').count(), 128);
    }

    #[test]
    fn replacement_characters_as_from_utf8_lossy_places_them() {
        // Pseudo-random mixes of ASCII, whole and cut characters and stray
        // bytes, long enough to cross block boundaries anywhere.
        let pieces: [&[u8]; 8] = [
            b"ab",
            b"\n",
            "é".as_bytes(),
            "✓".as_bytes(),
            "𝄞".as_bytes(),
            b"\xf0\x9d",
            b"\xff",
            b"\xe2\x9c",
        ];
        for seed in 12345..12349u64 {
            let text = size::mixed_of(&pieces, seed, 3 * BLOCK);
            let back: String = serde_json::from_str(&enc(&text)).unwrap();
            assert_eq!(back, String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn parts_are_one_string() {
        let mut out = Vec::new();
        write_str_parts(&mut out, &[&b"a\"b"[..], b"", b"\n\xffc"]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\n\u{FFFD}c\"");
    }

    #[test]
    fn object_keeps_key_order() {
        let mut out = Vec::new();
        write_object(
            &mut out,
            &[("output", Field::Text(b"hi".to_vec())), ("exit_code", Field::Int(0))],
        )
        .unwrap();
        assert_eq!(out, br#"{"output":"hi","exit_code":0}"#);
    }
}
