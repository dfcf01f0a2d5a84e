//! The client's IP address: the socket peer, or, behind trusted proxies, the address they
//! report. Used for anonymous rate limits (and pageview dedupe).

use std::net::{IpAddr, Ipv4Addr};

use actix_web::HttpRequest;

/// The socket peer, unless it is in `trusted`: then the right-most `X-Forwarded-For` entry that
/// is not itself a trusted proxy. Entries further left were written by the client and could be
/// anything, so they are never believed. An entry that is not an IP address ends the walk at
/// the last address a trusted proxy vouched for.
pub fn client_ip(request: &HttpRequest, trusted: &[ipnet::IpNet]) -> IpAddr {
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
