//! A body's Content-Encoding (gzip, deflate, br) decoded with a bound on
//! the decoded size: a decompression bomb is an error, never an exhausted
//! memory.

use crate::error::ToolError;

/// `raw` decoded by `encoding` (the Content-Encoding header, `None` or
/// `identity` for none), at most `bound` bytes; past it `NETWORK_ERROR`
/// ("decompressed past N bytes"). `truncated` says the raw body was cut at
/// the download bound, so a stream that ends early is not an error.
pub fn decode(
    _raw: Vec<u8>,
    _encoding: Option<&str>,
    _bound: u64,
    _truncated: bool,
    _url: &str,
) -> Result<Vec<u8>, ToolError> {
    Err(ToolError::NetworkError("web client: not built yet".into()))
}
