//! Where a webhook may point: an `https://` URL whose host resolves only to public addresses
//! (contract "Webhooks"), unless the operator allows private targets. The same address rule is
//! applied at registration and, after a fresh DNS lookup, before every delivery.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The longest URL accepted.
pub const MAX_URL_LEN: usize = 2048;

/// A webhook target as registered: absolute, `https` (or `http` where private targets are
/// allowed), with a host, no credentials and no fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl(url::Url);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidWebhookUrl {
    #[error("the url is not an absolute URL of at most 2048 characters")]
    Malformed,
    #[error("the url must use https")]
    NotHttps,
    #[error("the url must not carry a user name, password or fragment")]
    Credentials,
    #[error("the url's host resolves to an address that is not public")]
    NotPublic,
    #[error("the url's host does not resolve")]
    Unresolvable,
}

/// Whether targets may be `http://` and private (`DECKHAND_WEBHOOK_ALLOW_PRIVATE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TargetPolicy {
    pub allow_private: bool,
}

impl WebhookUrl {
    /// The URL's form; its addresses are checked by [`TargetPolicy::check_addresses`] once
    /// resolved.
    pub fn parse(text: &str, policy: TargetPolicy) -> Result<Self, InvalidWebhookUrl> {
        if text.len() > MAX_URL_LEN || text.trim() != text {
            return Err(InvalidWebhookUrl::Malformed);
        }
        let url = url::Url::parse(text).map_err(|_| InvalidWebhookUrl::Malformed)?;
        match url.scheme() {
            "https" => {}
            "http" if policy.allow_private => {}
            _ => return Err(InvalidWebhookUrl::NotHttps),
        }
        if url.host().is_none() {
            return Err(InvalidWebhookUrl::Malformed);
        }
        if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
            return Err(InvalidWebhookUrl::Credentials);
        }
        if let Some(ip) = literal_address(&url)
            && !policy.admits(ip)
        {
            return Err(InvalidWebhookUrl::NotPublic);
        }
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The host to resolve (without brackets for IPv6 literals).
    pub fn host(&self) -> String {
        match self.0.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(host) => host.to_string(),
            None => String::new(),
        }
    }

    /// The address the host names itself, when it is an IP literal.
    pub fn literal_address(&self) -> Option<IpAddr> {
        literal_address(&self.0)
    }

    pub fn port(&self) -> u16 {
        self.0.port_or_known_default().unwrap_or(443)
    }
}

fn literal_address(url: &url::Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

impl TargetPolicy {
    /// Whether a webhook may be sent to `ip`.
    pub fn admits(self, ip: IpAddr) -> bool {
        self.allow_private || is_public(ip)
    }

    /// The addresses a host resolved to, when every one of them is allowed: a host with one
    /// private address among public ones is refused whole (DNS may hand out either).
    pub fn check_addresses(self, addresses: &[IpAddr]) -> Result<(), InvalidWebhookUrl> {
        if addresses.is_empty() {
            return Err(InvalidWebhookUrl::Unresolvable);
        }
        if addresses.iter().all(|ip| self.admits(*ip)) {
            Ok(())
        } else {
            Err(InvalidWebhookUrl::NotPublic)
        }
    }
}

/// A globally routable unicast address: not loopback, private, link-local, unspecified,
/// shared (CGNAT), documentation, benchmarking, multicast or reserved, also when an IPv6
/// address embeds an IPv4 one.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_public_v4(ip),
        IpAddr::V6(ip) => is_public_v6(ip),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space, RFC 6598
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address a gateway will reach.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = segments[6].to_be_bytes();
        let [c, d] = segments[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    if segments[0] == 0x2002 {
        let [a, b] = segments[1].to_be_bytes();
        let [c, d] = segments[2].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
        || segments[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible, deprecated
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: TargetPolicy = TargetPolicy {
        allow_private: false,
    };
    const LAX: TargetPolicy = TargetPolicy {
        allow_private: true,
    };

    #[test]
    fn only_https_urls_with_a_host_are_targets() {
        assert!(WebhookUrl::parse("https://hooks.example.com/in?x=1", STRICT).is_ok());
        for (text, error) in [
            ("http://hooks.example.com/", InvalidWebhookUrl::NotHttps),
            ("ftp://hooks.example.com/", InvalidWebhookUrl::NotHttps),
            ("hooks.example.com/in", InvalidWebhookUrl::Malformed),
            ("https://", InvalidWebhookUrl::Malformed),
            (" https://a.example/", InvalidWebhookUrl::Malformed),
            ("https://user:pw@a.example/", InvalidWebhookUrl::Credentials),
            ("https://a.example/#frag", InvalidWebhookUrl::Credentials),
            ("https://127.0.0.1/", InvalidWebhookUrl::NotPublic),
            ("https://[::1]:8443/", InvalidWebhookUrl::NotPublic),
            ("https://10.1.2.3/", InvalidWebhookUrl::NotPublic),
            ("https://169.254.169.254/", InvalidWebhookUrl::NotPublic),
            ("https://0.0.0.0/", InvalidWebhookUrl::NotPublic),
        ] {
            assert_eq!(WebhookUrl::parse(text, STRICT), Err(error), "{text}");
        }
        let long = format!("https://a.example/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(
            WebhookUrl::parse(&long, STRICT),
            Err(InvalidWebhookUrl::Malformed)
        );
    }

    #[test]
    fn private_targets_pass_only_when_allowed() {
        let url = WebhookUrl::parse("http://127.0.0.1:9000/hook", LAX).unwrap();
        assert_eq!(url.host(), "127.0.0.1");
        assert_eq!(url.port(), 9000);
        let v6 = WebhookUrl::parse("https://[::1]/", LAX).unwrap();
        assert_eq!(v6.host(), "::1");
        assert_eq!(v6.port(), 443);
        assert!(LAX.check_addresses(&["10.0.0.1".parse().unwrap()]).is_ok());
    }

    #[test]
    fn resolved_addresses_must_all_be_public() {
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        let private: IpAddr = "192.168.1.1".parse().unwrap();
        assert_eq!(STRICT.check_addresses(&[public]), Ok(()));
        assert_eq!(
            STRICT.check_addresses(&[public, private]),
            Err(InvalidWebhookUrl::NotPublic)
        );
        assert_eq!(
            STRICT.check_addresses(&[]),
            Err(InvalidWebhookUrl::Unresolvable)
        );
    }

    #[test]
    fn the_address_rule() {
        for text in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "2002:5db8:d822::1",
        ] {
            assert!(is_public(text.parse().unwrap()), "{text}");
        }
        for text in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.0.1",
            "192.168.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "240.0.0.1",
            "::",
            "::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2002:7f00:1::1",
            "::127.0.0.1",
        ] {
            assert!(!is_public(text.parse().unwrap()), "{text}");
        }
    }
}
