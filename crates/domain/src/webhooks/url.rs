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
    if let Some(carried) = embedded_ipv4(ip) {
        return is_public_v4(carried);
    }
    let segments = ip.segments();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local
        || (segments[0] & 0xffc0) == 0xfe80 // link-local
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
        || segments[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible, deprecated
}

/// The IPv4 address an IPv6 address carries to a translator or tunnel that will reach it, if
/// any: a packet to the IPv6 address ends at that IPv4 address, so it is judged by it.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let octets = ip.octets();
    let at = |i: usize| Ipv4Addr::new(octets[i], octets[i + 1], octets[i + 2], octets[i + 3]);
    match ip.segments() {
        // IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96 (RFC 2765), NAT64's
        // well-known prefix 64:ff9b::/96 (RFC 6052) and the /96 of its local-use prefix
        // (RFC 8215): the last 32 bits.
        [0, 0, 0, 0, 0, 0xffff, _, _]
        | [0, 0, 0, 0, 0xffff, 0, _, _]
        | [0x64, 0xff9b, 0, 0, 0, 0, _, _]
        | [0x64, 0xff9b, 1, 0, 0, 0, _, _] => Some(at(12)),
        // The rest of the local-use 64:ff9b:1::/48: its NAT64 prefix may be any length from /48
        // to /96, which only the local network knows, and with it where the IPv4 address sits.
        // None can be judged, so none is allowed (as the unspecified address).
        [0x64, 0xff9b, 1, ..] => Some(Ipv4Addr::UNSPECIFIED),
        // 6to4 2002::/16 (RFC 3056): the 6to4 router's address, bits 16 to 47.
        [0x2002, ..] => Some(at(2)),
        // Teredo 2001::/32 (RFC 4380): the client's address, the last 32 bits inverted.
        [0x2001, 0, ..] => Some(Ipv4Addr::from(!u32::from(at(12)))),
        _ => None,
    }
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

    /// Every form of IPv6 that carries an IPv4 address is judged by that address: a public one
    /// inside is allowed, a loopback or private one refused, whatever the IPv6 around it.
    #[test]
    fn ipv6_addresses_are_judged_by_the_ipv4_address_they_carry() {
        for (form, public, private) in [
            // IPv4-mapped ::ffff:0:0/96.
            ("mapped", "::ffff:93.184.216.34", "::ffff:192.168.1.1"),
            // IPv4-translated ::ffff:0:0:0/96.
            ("translated", "::ffff:0:5db8:d822", "::ffff:0:7f00:1"),
            // NAT64, the well-known prefix.
            ("NAT64", "64:ff9b::5db8:d822", "64:ff9b::a00:1"),
            // NAT64, local use, its /96.
            ("local NAT64", "64:ff9b:1::5db8:d822", "64:ff9b:1::7f00:1"),
            // 6to4.
            ("6to4", "2002:5db8:d822::1", "2002:c0a8:101::1"),
            // Teredo: the client is the last 32 bits inverted (93.184.216.34, 127.0.0.1).
            (
                "Teredo",
                "2001:0:4136:e378:8000:63bf:a247:27dd",
                "2001:0:4136:e378:8000:63bf:80ff:fffe",
            ),
        ] {
            assert!(is_public(public.parse().unwrap()), "{form}: {public}");
            assert!(!is_public(private.parse().unwrap()), "{form}: {private}");
            assert_eq!(
                STRICT.check_addresses(&[private.parse().unwrap()]),
                Err(InvalidWebhookUrl::NotPublic),
                "{form}: {private}"
            );
        }
        // A literal URL host is judged the same way at registration.
        assert_eq!(
            WebhookUrl::parse("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", STRICT),
            Err(InvalidWebhookUrl::NotPublic)
        );
        assert!(WebhookUrl::parse("https://[64:ff9b::5db8:d822]/", STRICT).is_ok());
        // Elsewhere in the local-use NAT64 /48 the IPv4 address may sit in several places, as
        // the local prefix's length puts it (here 93.184.216.34 as a /48, 10.0.0.1 as a /96):
        // refused whatever it holds.
        assert!(!is_public("64:ff9b:1:5db8:d8:2200:a00:1".parse().unwrap()));
        assert!(!is_public("64:ff9b:1:5db8:d8:2200::".parse().unwrap()));
        // Teredo that inverts to a public address, and other 2001::/23 space, is not Teredo.
        assert!(is_public("2001:4860:4860::8888".parse().unwrap()));
    }
}
