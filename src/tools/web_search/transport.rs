//! The one GET of a search, through the web tools' client (`crate::web`,
//! docs/CONFINEMENT.md, "The web tools' network"): its address check, bounds
//! and TLS, with the endpoint the user configured trusted (its host may be
//! loopback or private: the user chose it); a redirect elsewhere is checked
//! as any.

use crate::error::ToolError;
use crate::web::{self, Policy, MAX_BYTES_VAR};

use super::settings::Settings;

/// What the provider answered.
pub struct Reply {
    pub status: u16,
    /// `Retry-After`, when the provider sent it.
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// GETs `url` with `headers` (Brave's key) under the environment's policy.
pub fn get(
    settings: &Settings,
    url: &str,
    headers: &[(&'static str, String)],
) -> Result<Reply, ToolError> {
    let mut policy = Policy::from_env()?;
    if let Some(host) = settings.configured.as_deref().and_then(host_of) {
        policy = policy.trusting(&host);
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let request = web::Request { url, headers: &headers, accept: "application/json" };
    let fetched = web::get(&request, &policy)?;
    if let Some(bound) = fetched.cut {
        return Err(ToolError::ApiError(format!(
            "The search API's answer passed {bound} bytes ({MAX_BYTES_VAR}) and was not read"
        )));
    }
    Ok(Reply { status: fetched.status, retry_after: fetched.retry_after, body: fetched.body })
}

/// The host of the configured endpoint, as the client names it.
fn host_of(endpoint: &str) -> Option<String> {
    url::Url::parse(endpoint).ok()?.host_str().map(str::to_owned)
}
