//! Where `mcp --listen ADDR` listens: `HOST:PORT`, `[V6]:PORT` or a bare
//! `PORT` (on 127.0.0.1), and whether that address is reachable only from
//! this machine (docs/MCP.md, "Over HTTP").

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};

/// The socket address `ADDR` names; a host name is resolved (its first
/// address is taken).
pub fn parse(addr: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = addr.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(socket) = addr.parse::<SocketAddr>() {
        return Ok(socket);
    }
    let mut resolved = addr
        .to_socket_addrs()
        .map_err(|e| format!("--listen {addr}: expected PORT, HOST:PORT or [IPV6]:PORT ({e})"))?;
    resolved.next().ok_or_else(|| format!("--listen {addr}: the name resolves to no address"))
}

/// Whether only this machine can reach `addr` (127.0.0.0/8, ::1, and
/// IPv4-mapped loopback). 0.0.0.0 and :: are every interface: not loopback.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    match addr.ip() {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The `host` of a URL or `Host` header naming `addr` (`[::1]` for IPv6).
pub fn url_host(addr: &SocketAddr) -> String {
    match addr.ip() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_is_on_the_loopback_address() {
        assert_eq!(parse("8080").unwrap(), "127.0.0.1:8080".parse().unwrap());
        assert_eq!(parse("0").unwrap(), "127.0.0.1:0".parse().unwrap());
    }

    #[test]
    fn host_and_port_and_v6_are_taken_as_given() {
        assert_eq!(parse("0.0.0.0:9").unwrap(), "0.0.0.0:9".parse().unwrap());
        assert_eq!(parse("[::1]:9").unwrap(), "[::1]:9".parse().unwrap());
        assert!(parse("nonsense").is_err());
    }

    #[test]
    fn only_loopback_addresses_are_loopback() {
        assert!(is_loopback(&"127.0.0.1:1".parse().unwrap()));
        assert!(is_loopback(&"127.1.2.3:1".parse().unwrap()));
        assert!(is_loopback(&"[::1]:1".parse().unwrap()));
        assert!(is_loopback(&"[::ffff:127.0.0.1]:1".parse().unwrap()));
        assert!(!is_loopback(&"0.0.0.0:1".parse().unwrap()));
        assert!(!is_loopback(&"[::]:1".parse().unwrap()));
        assert!(!is_loopback(&"192.168.1.2:1".parse().unwrap()));
    }
}
