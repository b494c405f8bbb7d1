//! The domain filters of a search (docs/TOOLS.md, "web_search"): a result
//! is kept when its host is one of `allowed_domains` or under one (none
//! given: every host), and none of `blocked_domains`. As upstream ikigai
//! matches: the host, case aside, equals the domain or ends with `.` and
//! the domain; a leading `.` or `*.` of a domain, a port and user
//! information in the URL are ignored.

/// The domains of a call, lowercased.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Domains {
    pub allowed: Vec<String>,
    pub blocked: Vec<String>,
}

impl Domains {
    pub fn new(allowed: &[String], blocked: &[String]) -> Domains {
        Domains { allowed: normalized(allowed), blocked: normalized(blocked) }
    }

    /// Whether a result at `url` is kept.
    pub fn keeps(&self, url: &str) -> bool {
        let Some(host) = host_of(url) else {
            // A result without a host cannot be told to be in a domain.
            return self.allowed.is_empty();
        };
        let within = |domain: &String| in_domain(&host, domain);
        (self.allowed.is_empty() || self.allowed.iter().any(within))
            && !self.blocked.iter().any(within)
    }

    /// Whether any filter was given.
    pub fn any(&self) -> bool {
        !self.allowed.is_empty() || !self.blocked.is_empty()
    }
}

fn normalized(domains: &[String]) -> Vec<String> {
    domains
        .iter()
        .map(|d| d.trim().trim_start_matches("*.").trim_start_matches('.').to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .collect()
}

/// Whether `host` is `domain` or a name under it.
fn in_domain(host: &str, domain: &str) -> bool {
    host == domain || host.strip_suffix(domain).is_some_and(|head| head.ends_with('.'))
}

/// The host of an absolute URL, lowercased, without user information, port
/// or a final dot.
pub fn host_of(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        // An IPv6 literal: up to its `]`.
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domains(allowed: &[&str], blocked: &[&str]) -> Domains {
        let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Domains::new(&owned(allowed), &owned(blocked))
    }

    #[test]
    fn a_domain_holds_itself_and_its_subdomains_only() {
        let d = domains(&["rust-lang.org"], &[]);
        assert!(d.keeps("https://rust-lang.org/learn"));
        assert!(d.keeps("https://doc.Rust-Lang.org./std"));
        assert!(d.keeps("http://user:pw@blog.rust-lang.org:8080/x"));
        assert!(!d.keeps("https://notrust-lang.org/"));
        assert!(!d.keeps("https://rust-lang.org.evil.com/"));
        assert!(!d.keeps("not a url"));
    }

    #[test]
    fn blocked_wins_over_allowed_and_patterns_are_normalized() {
        let d = domains(&["*.example.com", " .Other.org "], &["ads.example.com"]);
        assert!(d.keeps("https://example.com/"));
        assert!(d.keeps("https://www.other.org/"));
        assert!(!d.keeps("https://ads.example.com/a"));
        assert!(!d.keeps("https://x.ads.example.com/a"));
        let none = domains(&[], &[]);
        assert!(none.keeps("https://anything.net") && !none.any());
        assert!(domains(&[], &["b.com"]).keeps("nothing"));
    }

    #[test]
    fn hosts_are_found_in_every_form_of_url() {
        assert_eq!(host_of("https://[::1]:8080/p").as_deref(), Some("::1"));
        assert_eq!(host_of("http://A.B?q=1").as_deref(), Some("a.b"));
        assert_eq!(host_of("http://a.b#x").as_deref(), Some("a.b"));
        assert_eq!(host_of("https:///path"), None);
    }
}
