//! The client's IP address: the socket peer, or, behind trusted proxies, the address they
//! report; and [`IpKey`], what every per-IP rule counts under (anonymous rate limits, the
//! revoked-token block, pageview dedupe).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The key per-IP rules count a client under: an IPv4 address alone, an IPv6 address by its
/// /64. One subscriber, one host even, usually holds a whole /64 and can send from any
/// address in it, so keying single IPv6 addresses would give it 2^64 buckets. An IPv4-mapped
/// IPv6 address (`::ffff:192.0.2.1`, from a dual-stack socket) is its IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct IpKey(IpAddr);

impl IpKey {
    /// The prefix length IPv6 addresses are keyed by.
    pub(crate) const IPV6_PREFIX: u32 = 64;

    pub(crate) fn of(ip: IpAddr) -> Self {
        Self(match ip {
            IpAddr::V4(_) => ip,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let mask = u128::MAX << (128 - Self::IPV6_PREFIX);
                    IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
                }
            },
        })
    }

    #[cfg(test)]
    pub(crate) const fn v4(a: u8, b: u8, c: u8, d: u8) -> Self {
        Self(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
    }

    /// The key as an address: the IPv4 address, or the first address of the IPv6 /64.
    pub(crate) fn addr(self) -> IpAddr {
        self.0
    }
}

impl fmt::Display for IpKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/{}", Self::IPV6_PREFIX),
        }
    }
}

/// The [`IpKey`] of the request's client (see [`client_ip`]).
pub(crate) fn client_key(request: &HttpRequest, trusted: &[ipnet::IpNet]) -> IpKey {
    IpKey::of(client_ip(request, trusted))
}

use actix_web::HttpRequest;

/// The socket peer, unless it is in `trusted`: then the right-most `X-Forwarded-For` entry that
/// is not itself a trusted proxy. Entries further left were written by the client and could be
/// anything, so they are never believed. An entry that is not an IP address ends the walk at
/// the last address a trusted proxy vouched for.
pub(crate) fn client_ip(request: &HttpRequest, trusted: &[ipnet::IpNet]) -> IpAddr {
    let peer = request
        .peer_addr()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |address| address.ip());
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let entries: Vec<&str> = request
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for entry in entries.iter().rev() {
        let Ok(ip) = entry.parse::<IpAddr>() else {
            break;
        };
        client = ip;
        if !is_trusted(&ip) {
            break;
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    fn request(peer: &str, forwarded: &[&str]) -> HttpRequest {
        let mut request = TestRequest::default().peer_addr(format!("{peer}:1234").parse().unwrap());
        for value in forwarded {
            request = request.append_header(("x-forwarded-for", *value));
        }
        request.to_http_request()
    }

    fn nets(list: &[&str]) -> Vec<ipnet::IpNet> {
        list.iter().map(|net| net.parse().unwrap()).collect()
    }

    fn key(ip: &str) -> IpKey {
        IpKey::of(ip.parse().unwrap())
    }

    #[test]
    fn ipv6_addresses_are_keyed_by_their_64_and_ipv4_alone() {
        assert_eq!(
            key("2001:db8:1:2::1"),
            key("2001:db8:1:2:ffff:ffff:ffff:ffff")
        );
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("2001:db8:1:2:3:4:5:6").to_string(), "2001:db8:1:2::/64");
        assert_ne!(key("192.0.2.1"), key("192.0.2.2"));
        assert_eq!(key("192.0.2.1").to_string(), "192.0.2.1");
        assert_eq!(key("::ffff:192.0.2.1"), key("192.0.2.1"));
        assert_eq!(
            key("2001:db8:1:2::9").addr(),
            "2001:db8:1:2::".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let ip = client_ip(
            &request("203.0.113.9", &["198.51.100.1"]),
            &nets(&["10.0.0.0/8"]),
        );
        assert_eq!(ip, "203.0.113.9".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn behind_trusted_proxies_the_rightmost_untrusted_entry_is_the_client() {
        let trusted = nets(&["10.0.0.0/8"]);
        let ip = client_ip(
            &request("10.0.0.1", &["1.1.1.1, 198.51.100.7", "10.0.0.2"]),
            &trusted,
        );
        assert_eq!(ip, "198.51.100.7".parse::<IpAddr>().unwrap());
        let no_header = client_ip(&request("10.0.0.1", &[]), &trusted);
        assert_eq!(no_header, "10.0.0.1".parse::<IpAddr>().unwrap());
        let garbage = client_ip(&request("10.0.0.1", &["1.1.1.1, nonsense"]), &trusted);
        assert_eq!(garbage, "10.0.0.1".parse::<IpAddr>().unwrap());
    }
}
