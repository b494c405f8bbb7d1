//! What both providers share: the search asked, a result as answered, the
//! URL's query text, and what an HTTP status other than 200 means, in
//! upstream ikigai's codes (docs/TOOLS.md, "web_search"): 401 and 403
//! `AUTH_INVALID`, 429 `RATE_LIMIT` (with `Retry-After` when given), any
//! other `API_ERROR`, as is an answer that is not the provider's JSON.

use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::error::{one_line, ToolError};

use super::filter::host_of;
use super::settings::{Provider, Settings};
use super::{brave, searxng, text};

/// The most bytes of a result's title and snippet; a URL is kept whole.
/// Search snippets run to about 300 characters; past that a provider sends
/// page text, which web_fetch reads better.
pub const TITLE_MAX: usize = 200;
pub const SNIPPET_MAX: usize = 400;
/// The most bytes of a provider's error text told in API_ERROR.
const ERROR_TEXT_MAX: usize = 300;

/// One search, its parameters checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    pub query: String,
    pub count: u32,
    pub offset: u64,
}

/// One result: plain text, bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

impl Hit {
    /// The result a provider's object holds (its snippet under
    /// `snippet_key`), `None` without a URL.
    pub fn of(result: &Value, snippet_key: &str) -> Option<Hit> {
        let url = result.get("url")?.as_str()?.trim();
        if url.is_empty() {
            return None;
        }
        let field = |key: &str, max: usize| {
            let raw = result.get(key).and_then(Value::as_str).unwrap_or_default();
            text::cut(&text::plain(raw), max)
        };
        Some(Hit {
            title: field("title", TITLE_MAX),
            url: url.to_owned(),
            snippet: field(snippet_key, SNIPPET_MAX),
        })
    }
}

/// What a provider answered.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Answered {
    pub hits: Vec<Hit>,
    /// SearXNG's engines that did not answer (`engine (why)`).
    pub silent: Vec<String>,
}

/// The URL of `search` under `settings`.
pub fn url(settings: &Settings, search: &Search) -> String {
    match settings.provider {
        Provider::Brave(_) => brave::url(settings.endpoint(), search),
        Provider::Searxng => searxng::url(settings.endpoint(), search),
    }
}

/// The request's headers: Brave's key (never in the URL, which proxies
/// and logs keep).
pub fn headers(settings: &Settings) -> Vec<(&'static str, String)> {
    match &settings.provider {
        Provider::Brave(key) => vec![("X-Subscription-Token", key.value.clone())],
        Provider::Searxng => Vec::new(),
    }
}

/// The results of a 200 answer's body.
pub fn answered(settings: &Settings, body: &[u8]) -> Result<Answered, ToolError> {
    let host = host(settings);
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ToolError::ApiError(format!("Invalid JSON response from the search API ({host}): {e}"))
    })?;
    let (hits, format) = match settings.provider {
        Provider::Brave(_) => (brave::hits(&value), "Brave's web search JSON (web.results)"),
        Provider::Searxng => (searxng::hits(&value), "SearXNG's JSON (results)"),
    };
    let hits = hits.ok_or_else(|| {
        ToolError::ApiError(format!("The search API's answer ({host}) is not {format}"))
    })?;
    let silent = match settings.provider {
        Provider::Searxng => searxng::unresponsive(&value),
        Provider::Brave(_) => Vec::new(),
    };
    Ok(Answered { hits, silent })
}

/// The error an answer of `status` (not 200) means; `retry_after` is its
/// `Retry-After` header, `body` what it said.
pub fn refused(
    settings: &Settings,
    status: u16,
    retry_after: Option<&str>,
    body: &[u8],
) -> ToolError {
    let host = host(settings);
    match (status, &settings.provider) {
        (401 | 403, Provider::Brave(key)) => ToolError::AuthInvalid(format!(
            "API key is invalid or unauthorized (HTTP {status} from {host}): check {}",
            key.from.told()
        )),
        (401 | 403, Provider::Searxng) => ToolError::AuthInvalid(format!(
            "The SearXNG instance at {} refused the search (HTTP {status}): its settings.yml \
             must list json under search.formats, and it must not require a login",
            settings.endpoint()
        )),
        (429, _) => ToolError::RateLimit(match retry_after.map(str::trim) {
            Some(secs) if !secs.is_empty() && secs.bytes().all(|b| b.is_ascii_digit()) => {
                format!("Rate limit exceeded (HTTP 429 from {host}): retry after {secs} s")
            }
            // An HTTP date is 29 characters; anything longer is not one.
            Some(when) if !when.is_empty() && when.len() <= 64 => {
                format!("Rate limit exceeded (HTTP 429 from {host}): retry after {when}")
            }
            _ => format!(
                "Rate limit exceeded (HTTP 429 from {host}): wait before searching again \
                 (Brave's free plan: 1 search a second, 2,000 a month)"
            ),
        }),
        _ => {
            let mut message = format!("The search API answered HTTP {status} ({host})");
            if let Some(said) = said(body) {
                message.push_str(&format!(": {said}"));
            }
            ToolError::ApiError(message)
        }
    }
}

/// What an error answer says, on one line and short: Brave's
/// `error.detail`, else the body's text.
fn said(body: &[u8]) -> Option<String> {
    let detail = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
        let detail = v.get("error")?.get("detail")?.as_str()?.to_owned();
        Some(detail)
    });
    let text = detail.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let text = one_line(&text::plain(&text));
    (!text.is_empty()).then(|| text::cut(&text, ERROR_TEXT_MAX))
}

/// The endpoint's host, for messages.
pub fn host(settings: &Settings) -> String {
    host_of(settings.endpoint()).unwrap_or_else(|| settings.endpoint().to_owned())
}

/// `text` as a query component: everything but letters and digits escaped.
pub fn encoded(text: &str) -> String {
    utf8_percent_encode(text, NON_ALPHANUMERIC).to_string()
}

/// `endpoint` with `query` added to its own.
pub fn joined(endpoint: &str, query: &str) -> String {
    let base = endpoint.split('#').next().unwrap_or(endpoint);
    match base.contains('?') {
        true if base.ends_with(['?', '&']) => format!("{base}{query}"),
        true => format!("{base}&{query}"),
        false => format!("{base}?{query}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::settings::{Key, KeySource};
    use super::*;

    fn brave() -> Settings {
        let key = Key { value: "k".into(), from: KeySource::Environment };
        Settings { provider: Provider::Brave(key), configured: None }
    }

    fn searxng() -> Settings {
        Settings { provider: Provider::Searxng, configured: Some("http://127.0.0.1:8888".into()) }
    }

    #[test]
    fn each_status_has_its_code_and_says_what_to_do() {
        let cases = [
            (brave(), 401, None, &b""[..], "AUTH_INVALID",
             "API key is invalid or unauthorized (HTTP 401 from api.search.brave.com): check \
              BRAVE_API_KEY in the environment"),
            (searxng(), 403, None, b"", "AUTH_INVALID",
             "The SearXNG instance at http://127.0.0.1:8888 refused the search (HTTP 403): its \
              settings.yml must list json under search.formats, and it must not require a login"),
            (brave(), 429, Some("7"), b"", "RATE_LIMIT",
             "Rate limit exceeded (HTTP 429 from api.search.brave.com): retry after 7 s"),
            (brave(), 429, Some("Wed, 21 Oct 2026 07:28:00 GMT"), b"", "RATE_LIMIT",
             "Rate limit exceeded (HTTP 429 from api.search.brave.com): retry after Wed, 21 Oct \
              2026 07:28:00 GMT"),
            (brave(), 429, Some(&"x".repeat(65)), b"", "RATE_LIMIT",
             "Rate limit exceeded (HTTP 429 from api.search.brave.com): wait before searching \
              again (Brave's free plan: 1 search a second, 2,000 a month)"),
            (brave(), 422, None,
             br#"{"type":"ErrorResponse","error":{"detail":"Unable to validate request parameter(s)","status":422}}"#,
             "API_ERROR",
             "The search API answered HTTP 422 (api.search.brave.com): Unable to validate \
              request parameter(s)"),
            (searxng(), 500, None, b"<h1>Internal\nError</h1>", "API_ERROR",
             "The search API answered HTTP 500 (127.0.0.1): Internal Error"),
        ];
        for (settings, status, retry, body, code, message) in cases {
            let err = refused(&settings, status, retry, body);
            assert_eq!((err.code(), err.to_string().as_str()), (code, message));
        }
    }

    #[test]
    fn a_body_not_in_the_format_is_an_api_error() {
        let bad = answered(&brave(), b"<html>").unwrap_err();
        assert_eq!(bad.code(), "API_ERROR");
        assert!(
            bad.to_string()
                .starts_with("Invalid JSON response from the search API (api.search.brave.com): "),
            "{bad}"
        );
        let shape = answered(&searxng(), br#"{"web":{}}"#).unwrap_err();
        assert_eq!(
            shape.to_string(),
            "The search API's answer (127.0.0.1) is not SearXNG's JSON (results)"
        );
    }

    #[test]
    fn queries_join_the_endpoints_own() {
        assert_eq!(joined("http://a/s", "q=1"), "http://a/s?q=1");
        assert_eq!(joined("http://a/s?k=v", "q=1"), "http://a/s?k=v&q=1");
        assert_eq!(joined("http://a/s?", "q=1"), "http://a/s?q=1");
        assert_eq!(joined("http://a/s#top", "q=1"), "http://a/s?q=1");
    }
}
