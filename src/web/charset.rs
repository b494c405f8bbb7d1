//! A fetched body as UTF-8: its charset found as a browser finds it (the
//! WHATWG encoding labels, through encoding_rs).

use encoding_rs::{Encoding, UTF_8};

/// How far into an HTML body a `<meta>` charset is looked for, as browsers
/// do (1024 bytes in the standard; 4 KiB finds the late ones too).
const META_WINDOW: usize = 4096;

/// The body as UTF-8: a byte-order mark first, then the header's charset,
/// then (for HTML) a `<meta charset>` or `http-equiv` in the first 4 KiB,
/// else UTF-8, invalid bytes replaced by U+FFFD.
pub fn to_text(body: &[u8], header: Option<&str>, is_html: bool) -> String {
    if let Some((encoding, bom)) = Encoding::for_bom(body) {
        return decode(encoding, &body[bom..]);
    }
    let declared = header
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .or_else(|| if is_html { meta_charset(body) } else { None });
    decode(declared.unwrap_or(UTF_8), body)
}

fn decode(encoding: &'static Encoding, bytes: &[u8]) -> String {
    encoding.decode_without_bom_handling(bytes).0.into_owned()
}

/// The charset a `<meta charset=X>` or `<meta http-equiv=Content-Type
/// content="…; charset=X">` names in the head of `body`. UTF-16 named
/// there means UTF-8, as the HTML standard says (the bytes were read as
/// ASCII to find it).
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = body[..body.len().min(META_WINDOW)].to_ascii_lowercase();
    let mut rest = &head[..];
    while let Some(at) = find(rest, b"<meta") {
        let tag = &rest[at..];
        let end = tag.iter().position(|&b| b == b'>').unwrap_or(tag.len());
        if let Some(label) = charset_in(&tag[..end]) {
            if let Some(encoding) = Encoding::for_label(label) {
                return Some(if encoding.is_single_byte() || !is_utf16(encoding) {
                    encoding
                } else {
                    UTF_8
                });
            }
        }
        rest = &tag[end..];
    }
    None
}

fn is_utf16(encoding: &'static Encoding) -> bool {
    encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE
}

/// The label after `charset` `=` in a tag, quotes and spaces skipped.
fn charset_in(tag: &[u8]) -> Option<&[u8]> {
    let at = find(tag, b"charset")?;
    let rest = tag[at + b"charset".len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b"=")?.trim_ascii_start();
    let rest = rest.strip_prefix(b"\"").or_else(|| rest.strip_prefix(b"'")).unwrap_or(rest);
    let len = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || b"-_:.".contains(b)))
        .unwrap_or(rest.len());
    (len > 0).then(|| &rest[..len])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charset_is_found_in_the_order_browsers_look() {
        let latin1 = b"caf\xe9";
        assert_eq!(to_text(latin1, Some("ISO-8859-1"), false), "café");
        assert_eq!(to_text(latin1, None, false), "caf\u{fffd}");
        // Shift-JIS, declared in a meta tag only.
        let sjis = b"<html><head><META http-equiv=\"Content-Type\" content=\"text/html; \
                     charset=Shift_JIS\"></head><body>\x93\xfa\x96\x7b</body>";
        assert!(to_text(sjis, None, true).contains("日本"));
        let meta = b"<meta charset='windows-1252'><p>\x93quoted\x94</p>";
        assert!(to_text(meta, None, true).contains("\u{201c}quoted\u{201d}"));
        // Not looked for outside HTML.
        assert!(!to_text(meta, None, false).contains('\u{201c}'));
        // The header wins over the meta tag; the byte-order mark over both.
        assert!(to_text(meta, Some("utf-8"), true).contains('\u{fffd}'));
        assert_eq!(to_text(b"\xef\xbb\xbfcaf\xc3\xa9", Some("latin1"), true), "café");
        assert_eq!(to_text(b"\xff\xfea\x00", None, false), "a");
        // UTF-16 named in a meta tag means UTF-8.
        assert_eq!(to_text(b"<meta charset=utf-16>\xc3\xa9", None, true), "<meta charset=utf-16>é");
        // An unknown label is passed over.
        assert_eq!(to_text("é".as_bytes(), Some("nonsense"), true), "é");
    }
}
