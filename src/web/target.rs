//! A URL checked before it is fetched: parsed as browsers do (`url`: IP
//! literals in decimal or octal become dotted quads), http or https only,
//! no credentials (docs/CONFINEMENT.md, "The web tools' network").

use url::Url;

use crate::error::ToolError;

/// `text` parsed and checked: `INVALID_ARG` for a malformed URL, another
/// scheme, no host, or a user name or password in it.
pub fn parse(text: &str) -> Result<Url, ToolError> {
    let url = Url::parse(text.trim()).map_err(|err| {
        ToolError::InvalidArg(format!(
            "Invalid URL '{text}': {err} (an absolute http:// or https:// URL is needed)"
        ))
    })?;
    check(url, text)
}

/// A redirect's `Location`, resolved against the URL that sent it. A user
/// name or password in it is dropped: the server named them, and the
/// tools send none.
pub fn follow(from: &Url, location: &str) -> Result<Url, ToolError> {
    let mut url = from.join(location).map_err(|err| {
        ToolError::NetworkError(format!("{from} redirected to an invalid URL '{location}': {err}"))
    })?;
    // Both cannot fail on an http(s) URL with a host, which `check` ensures
    // next.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    check(url, location)
}

fn check(url: Url, text: &str) -> Result<Url, ToolError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::InvalidArg(format!(
            "Unsupported URL scheme '{}' in '{text}': only http:// and https:// URLs are fetched",
            url.scheme()
        )));
    }
    if url.host().is_none() {
        return Err(ToolError::InvalidArg(format!("Invalid URL '{text}': it names no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::InvalidArg(format!(
            "URL '{}' holds a user name or password: remove them (the web tools send no \
             credentials)",
            without_credentials(&url)
        )));
    }
    Ok(url)
}

/// The URL as it may be told: its credentials replaced by `***`.
fn without_credentials(url: &Url) -> String {
    let mut told = url.clone();
    if !told.username().is_empty() {
        let _ = told.set_username("***");
    }
    if told.password().is_some() {
        let _ = told.set_password(Some("***"));
    }
    told.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_literals_are_read_as_browsers_read_them() {
        for (text, host) in [
            ("http://2130706433/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://[::ffff:7f00:1]/", "[::ffff:7f00:1]"),
            ("HTTPS://Example.COM./a", "example.com."),
        ] {
            assert_eq!(parse(text).unwrap().host_str(), Some(host), "{text}");
        }
    }

    #[test]
    fn only_http_and_https_without_credentials_are_taken() {
        let cases = [
            (
                "ftp://example.com/x",
                "Unsupported URL scheme 'ftp' in 'ftp://example.com/x': only http:// and \
                 https:// URLs are fetched",
            ),
            (
                "file:///etc/passwd",
                "Unsupported URL scheme 'file' in 'file:///etc/passwd': only http:// and \
                 https:// URLs are fetched",
            ),
            (
                "example.com",
                "Invalid URL 'example.com': relative URL without a base (an absolute http:// \
                 or https:// URL is needed)",
            ),
            (
                "http://user:secret@example.com/",
                "URL 'http://***:***@example.com/' holds a user name or password: remove them \
                 (the web tools send no credentials)",
            ),
        ];
        for (text, message) in cases {
            let err = parse(text).unwrap_err();
            assert_eq!((err.code(), err.to_string().as_str()), ("INVALID_ARG", message));
        }
    }

    #[test]
    fn a_redirect_drops_credentials_and_resolves_relative_locations() {
        let from = parse("https://example.com/a/b").unwrap();
        assert_eq!(follow(&from, "c?d").unwrap().as_str(), "https://example.com/a/c?d");
        assert_eq!(follow(&from, "//u:p@other.org/").unwrap().as_str(), "https://other.org/");
        assert_eq!(follow(&from, "gopher://x/").unwrap_err().code(), "INVALID_ARG");
    }
}
