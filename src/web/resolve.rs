//! The resolver handed to ureq: it resolves a name, checks every address
//! against the policy, and returns only checked addresses, which ureq then
//! connects to: no second lookup, so no DNS-rebinding gap
//! (docs/CONFINEMENT.md, "The web tools' network").

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

use super::address::refused_range;
use super::policy::{Policy, ALLOW_VAR};
use crate::error::ToolError;

/// Resolves with the system's resolver (ureq's, which keeps its timeout),
/// then refuses the whole name when one of its addresses is refused.
#[derive(Debug)]
pub struct CheckedResolver {
    policy: Policy,
    /// The last refusal, told to the caller in place of ureq's error.
    refused: Arc<Mutex<Option<ToolError>>>,
}

impl CheckedResolver {
    /// The resolver and the slot where it leaves a refusal.
    pub fn new(policy: Policy) -> (CheckedResolver, Arc<Mutex<Option<ToolError>>>) {
        let refused = Arc::new(Mutex::new(None));
        (CheckedResolver { policy, refused: Arc::clone(&refused) }, refused)
    }
}

impl Resolver for CheckedResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = DefaultResolver::default().resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default();
        for addr in addrs.iter() {
            if let Err(refusal) = check(&self.policy, host, addr.ip()) {
                let told = refusal.to_string();
                if let Ok(mut slot) = self.refused.lock() {
                    *slot = Some(refusal);
                }
                return Err(ureq::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    told,
                )));
            }
        }
        Ok(addrs)
    }
}

/// `PERMISSION_DENIED` when `ip` (an address of `host`) is in a refused
/// range and the allow-list does not name it.
pub fn check(policy: &Policy, host: &str, ip: IpAddr) -> Result<(), ToolError> {
    let Some(kind) = refused_range(ip) else { return Ok(()) };
    if policy.allows(host, ip) {
        return Ok(());
    }
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let what = match bare.parse::<IpAddr>() {
        Ok(_) => ip.to_string(),
        Err(_) => format!("{host} ({ip})"),
    };
    Err(ToolError::AddressRefused(format!(
        "Refused to connect to {what}: {kind}, fetched only when {ALLOW_VAR} names it (the \
         user's setting: hosts, addresses or CIDR ranges, comma-separated)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_host_the_address_its_range_and_the_setting() {
        let policy = Policy::default();
        let err = check(&policy, "localhost", "::1".parse().unwrap()).unwrap_err();
        assert_eq!(err.code(), "PERMISSION_DENIED");
        assert_eq!(
            err.to_string(),
            "Refused to connect to localhost (::1): a loopback address, fetched only when \
             IKIGAI_TOOLS_FETCH_ALLOW names it (the user's setting: hosts, addresses or CIDR \
             ranges, comma-separated)"
        );
        let err = check(&policy, "169.254.169.254", "169.254.169.254".parse().unwrap());
        assert!(err.unwrap_err().to_string().starts_with(
            "Refused to connect to 169.254.169.254: the cloud metadata address (link-local), "
        ));
        assert_eq!(check(&policy, "example.com", "93.184.216.34".parse().unwrap()), Ok(()));
    }
}
