//! A file's bytes as the text hunks work on ('\n' line ends, no BOM), and
//! back, keeping its line ends and its BOM.
//!
//! - A file whose line ends are all or mostly `\r\n` is CRLF: its `\r\n`
//!   are read as '\n' (so patch lines match as if it were LF) and every
//!   '\n' is written back as `\r\n` (a few LF line ends among them become
//!   CRLF). In a file of mostly LF line ends, a `\r` stays part of its
//!   line (the ladder's second rung ignores it when matching).
//! - A UTF-8 BOM is taken off and put back.
//! - Bytes that are not UTF-8 are refused: apply_patch edits text.

use std::fmt;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A file's text and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// With '\n' line ends and without the BOM.
    pub text: String,
    /// How to write it back.
    pub form: Form,
}

/// How a file writes its text: what [`encode`] restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Form {
    /// All or most line ends were `\r\n`.
    pub crlf: bool,
    /// It began with a UTF-8 BOM.
    pub bom: bool,
}

/// The file is not UTF-8 text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotText {
    /// 0-based byte offset of the first invalid byte (the BOM counted).
    pub offset: usize,
}

impl fmt::Display for NotText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not UTF-8 text (byte {}): apply_patch edits text files only", self.offset)
    }
}

/// Decodes a file's bytes.
pub fn decode(bytes: &[u8]) -> Result<Decoded, NotText> {
    let (bom, body) = match bytes.strip_prefix(BOM) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    let text = std::str::from_utf8(body)
        .map_err(|e| NotText { offset: e.valid_up_to() + if bom { BOM.len() } else { 0 } })?;
    let line_ends = memchr::memchr_iter(b'\n', body).count();
    let crlf_ends = memchr::memmem::find_iter(body, b"\r\n").count();
    let crlf = crlf_ends > 0 && crlf_ends * 2 > line_ends;
    let text = if crlf { text.replace("\r\n", "\n") } else { text.to_string() };
    Ok(Decoded { text, form: Form { crlf, bom } })
}

/// The bytes to write for `text` ('\n' line ends) in the file's `form`.
pub fn encode(form: Form, text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + BOM.len());
    if form.bom {
        out.extend_from_slice(BOM);
    }
    if form.crlf {
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(line.as_bytes());
        }
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) -> Vec<u8> {
        let decoded = decode(bytes).unwrap();
        encode(decoded.form, &decoded.text)
    }

    #[test]
    fn an_lf_file_is_read_as_it_is() {
        let d = decode(b"a\nb\n").unwrap();
        assert_eq!(d, Decoded { text: "a\nb\n".into(), form: Form { crlf: false, bom: false } });
        assert_eq!(round_trip(b"a\nb"), b"a\nb");
    }

    #[test]
    fn a_crlf_file_reads_as_lf_and_writes_back_crlf() {
        let d = decode(b"a\r\nb\r\n").unwrap();
        assert_eq!(d.text, "a\nb\n");
        assert!(d.form.crlf);
        assert_eq!(encode(d.form, "a\nx\ny\n"), b"a\r\nx\r\ny\r\n");
        assert_eq!(round_trip(b"a\r\nb\r\nc"), b"a\r\nb\r\nc");
    }

    #[test]
    fn a_mostly_crlf_file_is_crlf() {
        let d = decode(b"a\r\nb\r\nc\n").unwrap();
        assert!(d.form.crlf);
        assert_eq!(d.text, "a\nb\nc\n");
        assert_eq!(encode(d.form, &d.text), b"a\r\nb\r\nc\r\n");
    }

    #[test]
    fn half_crlf_is_not_crlf() {
        assert!(!decode(b"a\r\nb\n").unwrap().form.crlf);
    }

    #[test]
    fn a_mostly_lf_file_keeps_its_stray_cr() {
        let d = decode(b"a\r\nb\nc\n").unwrap();
        assert!(!d.form.crlf);
        assert_eq!(d.text, "a\r\nb\nc\n");
        assert_eq!(round_trip(b"a\r\nb\nc\n"), b"a\r\nb\nc\n");
    }

    #[test]
    fn a_lone_cr_in_a_crlf_file_stays() {
        assert_eq!(decode(b"a\rb\r\n").unwrap().text, "a\rb\n");
        assert_eq!(round_trip(b"a\rb\r\nc\r\r\n"), b"a\rb\r\nc\r\r\n");
    }

    #[test]
    fn a_bom_is_taken_off_and_put_back() {
        let d = decode(b"\xEF\xBB\xBFa\r\nb\r\n").unwrap();
        assert_eq!(d.text, "a\nb\n");
        assert_eq!(d.form, Form { crlf: true, bom: true });
        assert_eq!(encode(d.form, "c\n"), b"\xEF\xBB\xBFc\r\n");
    }

    #[test]
    fn an_empty_file_is_empty_text() {
        assert_eq!(decode(b"").unwrap(), Decoded { text: String::new(), form: Form::default() });
        assert_eq!(encode(Form::default(), ""), b"");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_refused_with_their_offset() {
        let e = decode(b"ok\n\xFF\xFE").unwrap_err();
        assert_eq!(e, NotText { offset: 3 });
        assert_eq!(e.to_string(), "not UTF-8 text (byte 3): apply_patch edits text files only");
        assert_eq!(decode(b"\xEF\xBB\xBFab\xC3").unwrap_err(), NotText { offset: 5 });
    }
}
