//! One GET: the URL checked, redirects followed by hand (each hop checked,
//! a loop found), the body read up to the bound and decoded
//! (docs/CONFINEMENT.md, "The web tools' network").

use std::collections::HashSet;
use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ureq::unversioned::transport::DefaultConnector;
use ureq::Agent;
use url::Url;

use super::decode::decode;
use super::policy::{Policy, CA_VAR, MAX_BYTES_VAR, TIMEOUT_VAR};
use super::resolve::CheckedResolver;
use super::{io_reason, target, tls};
use crate::error::ToolError;

/// Sent as `User-Agent`: some servers refuse a request without one.
const USER_AGENT: &str = concat!("ikigai-tools/", env!("CARGO_PKG_VERSION"));
/// The codings [`decode`] takes.
const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// What to fetch.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub url: &'a str,
    /// Extra request headers (an API key's). Sent only to the URL's own
    /// origin: a redirect to another host, port or scheme drops them.
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
    /// The `Retry-After` header, as sent: when a 429 or 503 may be tried
    /// again (web_search's `RATE_LIMIT` says it).
    pub retry_after: Option<String>,
}

/// Fetches `req.url` under `policy`. Errors: `INVALID_ARG` (a malformed
/// URL, another scheme than http/https, credentials in it, a malformed
/// CA file), `PERMISSION_DENIED` (an address refused, naming it and
/// `IKIGAI_TOOLS_FETCH_ALLOW`), `NETWORK_ERROR` (DNS, connect, TLS, time,
/// redirects, a decompression bomb).
pub fn get(req: &Request, policy: &Policy) -> Result<Fetched, ToolError> {
    let first = target::parse(req.url)?;
    let started = Instant::now();
    let (resolver, refused) = CheckedResolver::new(policy.clone());
    let config = Agent::config_builder()
        .http_status_as_error(false)
        // Followed here, so that each hop is told and a loop found.
        .max_redirects(0)
        .max_redirects_will_error(false)
        // A proxy from the environment would connect for us to an address
        // never checked.
        .proxy(None)
        .tls_config(tls::config(policy.extra_ca.as_deref())?)
        .user_agent(USER_AGENT)
        .accept_encoding(ACCEPT_ENCODING)
        .timeout_connect(Some(policy.connect_timeout))
        .build();
    let agent = Agent::with_parts(config, DefaultConnector::new(), resolver);

    let mut url = first.clone();
    let mut seen = HashSet::from([url.to_string()]);
    let mut hops = 0;
    loop {
        let left = policy.timeout.saturating_sub(started.elapsed());
        let response = send(&agent, req, &first, &url, left, policy)
            .map_err(|err| fault(err, &refused, &url, policy))?;
        let status = response.status().as_u16();
        let location = response.headers().get("location").and_then(|v| v.to_str().ok());
        match (is_redirect(status), location) {
            (true, Some(location)) => {
                let next = target::follow(&url, location)?;
                hops += 1;
                if !seen.insert(next.to_string()) {
                    return Err(ToolError::NetworkError(format!(
                        "Redirect loop: {url} redirects back to {next}, already fetched"
                    )));
                }
                if hops > policy.max_redirects {
                    return Err(ToolError::NetworkError(format!(
                        "Too many redirects: more than {} from {first}; the last went to {next}",
                        policy.max_redirects
                    )));
                }
                url = next;
            }
            _ => return read(response, &url, policy),
        }
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn send(
    agent: &Agent,
    req: &Request,
    first: &Url,
    url: &Url,
    left: Duration,
    policy: &Policy,
) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
    if left.is_zero() {
        return Err(ureq::Error::Timeout(ureq::Timeout::Global));
    }
    let mut builder = agent
        .get(url.as_str())
        .header("Accept", req.accept)
        .config()
        .timeout_global(Some(left))
        .timeout_connect(Some(policy.connect_timeout.min(left)))
        .build();
    // An API key goes only where the caller sent it.
    if url.origin() == first.origin() {
        for (name, value) in req.headers {
            builder = builder.header(*name, *value);
        }
    }
    builder.call()
}

/// The body read up to the bound, then decoded.
fn read(
    response: ureq::http::Response<ureq::Body>,
    url: &Url,
    policy: &Policy,
) -> Result<Fetched, ToolError> {
    let header =
        |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (content_type, charset) = media_type(header("content-type").as_deref());
    let encoding = header("content-encoding");
    let retry_after = header("retry-after");
    let status = response.status().as_u16();
    let mut raw = Vec::new();
    let bound = policy.max_bytes;
    response
        .into_body()
        .into_reader()
        .take(bound.saturating_add(1))
        .read_to_end(&mut raw)
        .map_err(|err| fault(ureq::Error::Io(err), &Mutex::new(None), url, policy))?;
    let cut = (raw.len() as u64 > bound).then(|| {
        raw.truncate(bound as usize);
        bound
    });
    let body = decode(raw, encoding.as_deref(), bound, cut.is_some(), url.as_str())?;
    Ok(Fetched { url: url.to_string(), status, content_type, charset, body, cut, retry_after })
}

/// `Content-Type`'s media type (lowercased, no parameters) and charset.
fn media_type(value: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(value) = value else { return (None, None) };
    let mut parts = value.split(';');
    let mime = parts.next().map(|m| m.trim().to_ascii_lowercase()).filter(|m| !m.is_empty());
    let charset = parts.find_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_owned())
    });
    (mime, charset.filter(|c| !c.is_empty()))
}

/// ureq's error as the tool tells it: the refusal the resolver left, or
/// `NETWORK_ERROR` naming the host and what failed.
fn fault(
    err: ureq::Error,
    refused: &Mutex<Option<ToolError>>,
    url: &Url,
    policy: &Policy,
) -> ToolError {
    if let Some(refusal) = refused.lock().ok().and_then(|mut slot| slot.take()) {
        return refusal;
    }
    // ureq hands its own error back inside an I/O error from a body's reader.
    let err = match err {
        ureq::Error::Io(io) if io.get_ref().is_some_and(|e| e.is::<ureq::Error>()) => {
            match io.into_inner().map(|e| e.downcast::<ureq::Error>()) {
                Some(Ok(inner)) => *inner,
                Some(Err(other)) => ureq::Error::Io(std::io::Error::other(other)),
                None => ureq::Error::ConnectionFailed,
            }
        }
        other => other,
    };
    let host = url.host_str().unwrap_or_default();
    let timed_out = || {
        format!(
            "Timed out fetching {url}: the whole fetch may take {} s ({TIMEOUT_VAR})",
            policy.timeout.as_secs()
        )
    };
    let message = match &err {
        ureq::Error::Timeout(_) => timed_out(),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => timed_out(),
        ureq::Error::HostNotFound => format!("Cannot resolve host {host}: no address found"),
        ureq::Error::Io(io)
            if io.kind() == std::io::ErrorKind::InvalidData && url.scheme() == "https" =>
        {
            format!(
                "TLS failed for host {host}: {} ({CA_VAR} names a CA file to trust besides the \
                 system's)",
                io_reason(io)
            )
        }
        ureq::Error::Io(io) if is_dns_failure(io) => {
            format!("Cannot resolve host {host}: {}", io_reason(io))
        }
        ureq::Error::Io(io) => format!("Cannot fetch {url}: {}", io_reason(io)),
        ureq::Error::Tls(why) => format!("TLS failed for host {host}: {why}"),
        ureq::Error::Rustls(why) => format!("TLS failed for host {host}: {why}"),
        ureq::Error::BodyExceedsLimit(_) => {
            format!("The body of {url} passed the bound ({MAX_BYTES_VAR})")
        }
        other => format!("Cannot fetch {url}: {other}"),
    };
    ToolError::NetworkError(message)
}

/// getaddrinfo's failures, which std reports as `Uncategorized` with the
/// resolver's text ("failed to lookup address information: …").
fn is_dns_failure(io: &std::io::Error) -> bool {
    io.to_string().contains("lookup address")
}
