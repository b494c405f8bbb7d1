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
    pub fn from_settings(setting: impl Fn(&str) -> Option<String>) -> Result<Policy, ToolError> {
        let mut policy = Policy::default();
        if let Some(list) = setting(ALLOW_VAR) {
            policy.allow = parse_allow(&list)?;
        }
        if let Some(value) = nonempty(setting(MAX_BYTES_VAR)) {
            policy.max_bytes = value.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                bad_setting(MAX_BYTES_VAR, &value, "a number of bytes, 1 or more")
            })?;
        }
        if let Some(value) = nonempty(setting(TIMEOUT_VAR)) {
            let most = MAX_TIMEOUT.as_secs();
            let secs =
                value.parse::<u64>().ok().filter(|s| (1..=most).contains(s)).ok_or_else(|| {
                    bad_setting(TIMEOUT_VAR, &value, &format!("whole seconds from 1 to {most}"))
                })?;
            policy.timeout = Duration::from_secs(secs);
            policy.connect_timeout = policy.connect_timeout.min(policy.timeout);
        }
        policy.extra_ca = nonempty(setting(CA_VAR)).map(PathBuf::from);
        Ok(policy)
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
    pub fn allows(&self, host: &str, ip: IpAddr) -> bool {
        let host = host_key(host);
        self.allow.iter().any(|entry| match entry {
            Allowed::Host(name) => *name == host,
            Allowed::Net { base, prefix } => in_net(ip, *base, *prefix),
        })
    }
}

/// A host name as the allow-list keeps it: lowercased, without a trailing
/// dot, an IPv6 literal without its brackets.
fn host_key(host: &str) -> String {
    let host = host.trim_end_matches('.');
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.to_ascii_lowercase()
}

fn nonempty(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

fn bad_setting(name: &str, value: &str, wanted: &str) -> ToolError {
    ToolError::InvalidArg(format!("{name}={value} is not {wanted}: fix or unset it"))
}

/// `IKIGAI_TOOLS_FETCH_ALLOW`'s entries; one that is neither a host name,
/// an IP address nor a CIDR range is an error (naming it), not ignored.
fn parse_allow(list: &str) -> Result<Vec<Allowed>, ToolError> {
    let bad = |entry: &str| {
        ToolError::InvalidArg(format!(
            "{ALLOW_VAR}: '{entry}' is not a host name, an IP address or a CIDR range \
             (e.g. {ALLOW_VAR}=localhost,127.0.0.1,10.0.0.0/8)"
        ))
    };
    let mut allowed = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let unbracketed =
            entry.strip_prefix('[').and_then(|e| e.strip_suffix(']')).unwrap_or(entry);
        if let Some((base, prefix)) = entry.split_once('/') {
            let base: IpAddr = base.parse().map_err(|_| bad(entry))?;
            let prefix: u8 = prefix.parse().map_err(|_| bad(entry))?;
            if prefix > max_prefix(base) {
                return Err(bad(entry));
            }
            allowed.push(Allowed::Net { base, prefix });
        } else if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            allowed.push(Allowed::Net { base: ip, prefix: max_prefix(ip) });
        } else if is_host_name(entry) {
            allowed.push(Allowed::Host(host_key(entry)));
        } else {
            return Err(bad(entry));
        }
    }
    Ok(allowed)
}

fn is_host_name(text: &str) -> bool {
    let text = text.trim_end_matches('.');
    !text.is_empty()
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

fn max_prefix(ip: IpAddr) -> u8 {
    match ip {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    }
}

/// Whether `ip` is in `base/prefix`. An IPv4-mapped IPv6 address is taken
/// as the IPv4 address it holds, so `127.0.0.1` allows `::ffff:127.0.0.1`.
fn in_net(ip: IpAddr, base: IpAddr, prefix: u8) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match (ip, base) {
        (IpAddr::V4(ip), IpAddr::V4(base)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(base) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(base)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(base) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &str) -> Policy {
        Policy::from_settings(|name| (name == ALLOW_VAR).then(|| allow.to_owned())).unwrap()
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_allow_list_takes_hosts_addresses_and_ranges() {
        let p = policy(" LocalHost. ,127.0.0.2, 10.0.0.0/8,[::1],fd00::/8,");
        assert!(p.allows("localhost", ip("127.9.9.9")));
        assert!(p.allows("LOCALHOST.", ip("::1")));
        assert!(p.allows("other", ip("127.0.0.2")));
        assert!(!p.allows("other", ip("127.0.0.3")));
        assert!(p.allows("other", ip("10.200.1.1")));
        assert!(!p.allows("other", ip("11.0.0.1")));
        assert!(p.allows("other", ip("::1")));
        assert!(p.allows("other", ip("fd12::1")));
        assert!(p.allows("other", ip("::ffff:10.1.2.3")));
        assert!(!Policy::default().allows("localhost", ip("127.0.0.1")));
        assert!(Policy::default().trusting("Search.lan").allows("search.lan", ip("10.0.0.1")));
    }

    #[test]
    fn a_bad_allow_entry_is_an_error_naming_it() {
        for entry in ["10.0.0.0/33", "http://x", "a b", "::1/129", "10.0.0.0/x"] {
            let err =
                Policy::from_settings(|n| (n == ALLOW_VAR).then(|| entry.to_owned())).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARG");
            assert_eq!(
                err.to_string(),
                format!(
                    "IKIGAI_TOOLS_FETCH_ALLOW: '{entry}' is not a host name, an IP address or a \
                     CIDR range (e.g. IKIGAI_TOOLS_FETCH_ALLOW=localhost,127.0.0.1,10.0.0.0/8)"
                )
            );
        }
    }

    #[test]
    fn the_bounds_are_read_and_checked() {
        let p = Policy::from_settings(|n| match n {
            MAX_BYTES_VAR => Some("1000".into()),
            TIMEOUT_VAR => Some("3".into()),
            CA_VAR => Some("/etc/ca.pem".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(p.max_bytes, 1000);
        assert_eq!(p.timeout, Duration::from_secs(3));
        assert_eq!(p.connect_timeout, Duration::from_secs(3));
        assert_eq!(p.extra_ca, Some(PathBuf::from("/etc/ca.pem")));
        let d = Policy::from_settings(|_| None).unwrap();
        assert_eq!((d.max_bytes, d.timeout.as_secs(), d.max_redirects), (10485760, 25, 10));
        let err = Policy::from_settings(|n| (n == TIMEOUT_VAR).then(|| "60".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "IKIGAI_TOOLS_FETCH_TIMEOUT=60 is not whole seconds from 1 to 25: fix or unset it"
        );
    }
}
