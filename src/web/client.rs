//! One GET: the URL checked, redirects followed by hand (each hop checked,
//! a loop found), the body read up to the bound and decoded.

use super::policy::Policy;
use crate::error::ToolError;

/// What to fetch.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub url: &'a str,
    /// Extra request headers (an API key's); never logged.
    pub headers: &'a [(&'a str, &'a str)],
    /// The Accept header.
    pub accept: &'a str,
}

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The final URL, after redirects, without credentials.
    pub url: String,
    /// The HTTP status; 400 and more are answered here too, the tool decides.
    pub status: u16,
    /// The media type, lowercased, without parameters.
    pub content_type: Option<String>,
    /// The header's charset parameter, as sent.
    pub charset: Option<String>,
    /// The body, Content-Encoding decoded, at most the bound.
    pub body: Vec<u8>,
    /// `Some(bound)` when the download stopped at the bound.
    pub cut: Option<u64>,
}

/// Fetches `req.url` under `policy`. Errors: `INVALID_ARG` (a malformed
/// URL, another scheme than http/https, credentials in it),
/// `PERMISSION_DENIED` (an address refused, naming it and
/// `IKIGAI_TOOLS_FETCH_ALLOW`), `NETWORK_ERROR` (DNS, connect, TLS, time,
/// redirects, a decompression bomb).
pub fn get(req: &Request, _policy: &Policy) -> Result<Fetched, ToolError> {
    let _url = super::target::parse(req.url)?;
    Err(ToolError::NetworkError("web client: not built yet".into()))
}
