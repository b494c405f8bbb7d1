//! What a fetch may do: the addresses allowed although refused by default
//! (`IKIGAI_TOOLS_FETCH_ALLOW`), the bounds (bytes, time, redirects) and the
//! extra CA file. Read from the environment once per call
//! (docs/CONFINEMENT.md, "The web tools' network").

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::ToolError;

/// Hosts, IP addresses and CIDR ranges, comma-separated, fetched even though
/// they are loopback, private, link-local…: the only way such an address is
/// connected to (contract §12).
pub const ALLOW_VAR: &str = "IKIGAI_TOOLS_FETCH_ALLOW";
/// A PEM file of CA certificates trusted besides the system's.
pub const CA_VAR: &str = "IKIGAI_TOOLS_FETCH_CA";
/// The most bytes downloaded, and decoded, for one fetch.
pub const MAX_BYTES_VAR: &str = "IKIGAI_TOOLS_FETCH_MAX_BYTES";
/// Seconds a whole fetch may take (redirects and body included), at most
/// the default.
pub const TIMEOUT_VAR: &str = "IKIGAI_TOOLS_FETCH_TIMEOUT";

/// 10 MiB: a large page, far from the memory a tool may use.
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// 25 s: under the 30 s a host gives a tool call.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(25);
/// Connecting to one address.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: u32 = 10;

/// One entry of the allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// A host name, lowercased, without a trailing dot: every address it
    /// resolves to is allowed.
    Host(String),
    /// An address range (a single address is a /32 or /128).
    Net { base: IpAddr, prefix: u8 },
}

/// What a fetch may do.
#[derive(Debug, Clone)]
pub struct Policy {
    pub allow: Vec<Allowed>,
    /// The most bytes downloaded; the decoded body is bounded by it too.
    pub max_bytes: u64,
    /// The whole fetch, redirects and body included.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub max_redirects: u32,
    /// CA certificates trusted besides the system's.
    pub extra_ca: Option<PathBuf>,
}

impl Default for Policy {
    /// Nothing allowed beyond public addresses, the default bounds.
    fn default() -> Policy {
        Policy {
            allow: Vec::new(),
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: MAX_TIMEOUT,
            connect_timeout: CONNECT_TIMEOUT,
            max_redirects: MAX_REDIRECTS,
            extra_ca: None,
        }
    }
}

impl Policy {
    /// The settings from the environment: [`ALLOW_VAR`], [`CA_VAR`],
    /// [`MAX_BYTES_VAR`] (default 10 MiB), [`TIMEOUT_VAR`] (default and most
    /// 25 s). A malformed one is `INVALID_ARG` naming it.
    pub fn from_env() -> Result<Policy, ToolError> {
        Policy::from_settings(|name| std::env::var(name).ok())
    }

    /// The same from any source of settings (tests).
    pub fn from_settings(_setting: impl Fn(&str) -> Option<String>) -> Result<Policy, ToolError> {
        Err(ToolError::NetworkError("web client: not built yet".into()))
    }

    /// For an endpoint the user configured (a search provider's URL): its
    /// own host is allowed even if private or loopback (the user set it);
    /// its redirects are still checked.
    pub fn trusting(mut self, endpoint_host: &str) -> Policy {
        self.allow.push(Allowed::Host(endpoint_host.to_ascii_lowercase()));
        self
    }

    /// Whether `ip`, reached through `host`, is allowed although refused by
    /// default.
    pub fn allows(&self, _host: &str, _ip: IpAddr) -> bool {
        false
    }
}
