//! The address ranges a fetch never connects to unless allowed: loopback,
//! private, shared (CGNAT), link-local (the cloud metadata address),
//! unique-local, multicast, unspecified, broadcast and reserved, and the
//! same inside IPv4-mapped, IPv4-compatible, 6to4 and NAT64 IPv6 addresses
//! (docs/CONFINEMENT.md, "The web tools' network").

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of refused range `ip` is in ("a loopback address"), or `None`
/// for an address fetched by default.
pub fn refused_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    let kind = match (a, b) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "the cloud metadata address (link-local)",
        _ if ip.is_broadcast() => "the broadcast address",
        (0, _) => "an unspecified (this-network) address",
        (127, _) => "a loopback address",
        (10, _) | (192, 168) => "a private address",
        (172, b) if (16..32).contains(&b) => "a private address",
        (100, b) if (64..128).contains(&b) => "a shared (carrier-grade NAT) address",
        (169, 254) => "a link-local address",
        (224..=239, _) => "a multicast address",
        (240..=255, _) => "a reserved address",
        _ => return None,
    };
    Some(kind)
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    // An IPv4 address carried inside: the IPv4 address decides.
    if let Some(v4) = embedded_v4(ip) {
        return refused_v4(v4);
    }
    let first = ip.segments()[0];
    let kind = match first {
        _ if first & 0xffc0 == 0xfe80 => "a link-local address",
        // Site-local, deprecated but still routed by some as private.
        _ if first & 0xffc0 == 0xfec0 => "a private (site-local) address",
        _ if first & 0xfe00 == 0xfc00 => "a unique-local address",
        _ if first & 0xff00 == 0xff00 => "a multicast address",
        _ => return None,
    };
    Some(kind)
}

/// The IPv4 address an IPv6 one carries: IPv4-mapped (::ffff:a.b.c.d),
/// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96 and the local-use
/// 64:ff9b:1::/48) and 6to4 (2002:AABB:CCDD::/48).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0, 0, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] | [0x64, 0xff9b, 1, ..] => Some(low),
        [0x2002, hi, lo, ..] => {
            Some(Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(text: &str) -> Option<&'static str> {
        refused_range(text.parse().unwrap())
    }

    #[test]
    fn every_refused_range_is_named() {
        let cases = [
            ("127.0.0.1", "a loopback address"),
            ("127.255.0.9", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("172.16.0.1", "a private address"),
            ("172.31.255.255", "a private address"),
            ("192.168.1.1", "a private address"),
            ("100.64.0.1", "a shared (carrier-grade NAT) address"),
            ("100.127.255.254", "a shared (carrier-grade NAT) address"),
            ("169.254.169.254", "the cloud metadata address (link-local)"),
            ("169.254.1.1", "a link-local address"),
            ("0.0.0.0", "an unspecified (this-network) address"),
            ("0.1.2.3", "an unspecified (this-network) address"),
            ("224.0.0.1", "a multicast address"),
            ("239.255.255.250", "a multicast address"),
            ("255.255.255.255", "the broadcast address"),
            ("240.0.0.1", "a reserved address"),
            ("::", "an unspecified address"),
            ("::1", "a loopback address"),
            ("fe80::1", "a link-local address"),
            ("febf::1", "a link-local address"),
            ("fec0::1", "a private (site-local) address"),
            ("fc00::1", "a unique-local address"),
            ("fd12:3456::1", "a unique-local address"),
            ("ff02::1", "a multicast address"),
            ("::ffff:127.0.0.1", "a loopback address"),
            ("::ffff:169.254.169.254", "the cloud metadata address (link-local)"),
            ("::ffff:10.0.0.1", "a private address"),
            ("::127.0.0.1", "a loopback address"),
            ("64:ff9b::a9fe:a9fe", "the cloud metadata address (link-local)"),
            ("64:ff9b::7f00:1", "a loopback address"),
            ("64:ff9b:1::c0a8:101", "a private address"),
            ("2002:7f00:1::1", "a loopback address"),
            ("2002:a00:1::", "a private address"),
        ];
        for (ip, kind) in cases {
            assert_eq!(range(ip), Some(kind), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.1.1",
            "11.0.0.1",
            "223.255.255.255",
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(range(ip), None, "{ip}");
        }
    }
}
