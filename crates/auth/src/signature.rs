//! The partner request signature: `X-Signature: v1.<unix_seconds>.<hex>`, an HMAC-SHA256 keyed
//! with the partner secret over a canonical string of the request (see `docs/partners.md`).
//! Parsing is strict and verification constant-time; the window and single use are the
//! domain's rules.

use ring::hmac;

/// The only signature version.
const VERSION: &str = "v1";
/// At most 11 digits: enough for any real Unix time, and it keeps parsing free of overflow.
const MAX_TIMESTAMP_DIGITS: usize = 11;

/// A parsed `X-Signature` value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SignatureHeader {
    pub timestamp: i64,
    pub mac: [u8; 32],
}

impl std::fmt::Debug for SignatureHeader {
    // The MAC is a credential for as long as the window lasts: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SignatureHeader({}, ..)", self.timestamp)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the signature header is not v1.<unix_seconds>.<64 lower-case hex digits>")]
pub struct MalformedSignature;

impl SignatureHeader {
    /// Parses `v1.<1 to 11 digits>.<exactly 64 lower-case hex digits>`; anything else (another
    /// version, signs, spaces, a leading zero, upper-case hex, a missing part) is malformed. Only
    /// lower case and no leading zero are accepted because only they are produced: one spelling
    /// per signature.
    pub fn parse(value: &str) -> Result<Self, MalformedSignature> {
        let mut parts = value.split('.');
        let (Some(version), Some(timestamp), Some(hex), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(MalformedSignature);
        };
        if version != VERSION
            || timestamp.is_empty()
            || timestamp.len() > MAX_TIMESTAMP_DIGITS
            || !timestamp.bytes().all(|b| b.is_ascii_digit())
            || (timestamp.len() > 1 && timestamp.starts_with('0'))
        {
            return Err(MalformedSignature);
        }
        let timestamp = timestamp.parse().map_err(|_| MalformedSignature)?;
        let mac = decode_hex32(hex).ok_or(MalformedSignature)?;
        Ok(Self { timestamp, mac })
    }

    /// The header value, as partners send it.
    pub fn render(&self) -> String {
        format!("{VERSION}.{}.{}", self.timestamp, hex(&self.mac))
    }
}

/// What the canonical string is made of: the request as sent.
#[derive(Debug, Clone, Copy)]
pub struct CanonicalRequest<'a> {
    pub timestamp: i64,
    pub method: &'a str,
    /// The path exactly as sent, percent-encoding kept, without the query.
    pub path: &'a str,
    /// The raw query exactly as sent, without `?`; empty when there is none.
    pub query: &'a str,
    pub partner_slug: &'a str,
    pub body_sha256: &'a [u8; 32],
}

impl CanonicalRequest<'_> {
    /// The seven lines joined by `\n`, with no trailing newline.
    pub fn canonical_string(&self) -> String {
        [
            VERSION.to_owned(),
            self.timestamp.to_string(),
            self.method.to_ascii_uppercase(),
            self.path.to_owned(),
            self.query.to_owned(),
            self.partner_slug.to_owned(),
            hex(self.body_sha256),
        ]
        .join("\n")
    }

    /// The signature of this request under `secret` (the UTF-8 bytes of the partner secret).
    pub fn sign(&self, secret: &[u8]) -> SignatureHeader {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let tag = hmac::sign(&key, self.canonical_string().as_bytes());
        let mut mac = [0u8; 32];
        mac.copy_from_slice(tag.as_ref());
        SignatureHeader {
            timestamp: self.timestamp,
            mac,
        }
    }

    /// Whether `mac` signs this request under `secret`, compared in constant time.
    pub fn verify(&self, secret: &[u8], mac: &[u8; 32]) -> bool {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
        hmac::verify(&key, self.canonical_string().as_bytes(), mac).is_ok()
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

fn decode_hex32(text: &str) -> Option<[u8; 32]> {
    let digit = |b: u8| match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *slot = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sha256;

    fn request<'a>(body: &'a [u8; 32]) -> CanonicalRequest<'a> {
        CanonicalRequest {
            timestamp: 1_767_225_600,
            method: "post",
            path: "/api/public/v1/games/mtg/decks",
            query: "",
            partner_slug: "acme",
            body_sha256: body,
        }
    }

    #[test]
    fn the_canonical_string_has_seven_lines_and_no_trailing_newline() {
        let body = sha256(b"");
        let canonical = request(&body).canonical_string();
        assert_eq!(
            canonical,
            "v1\n1767225600\nPOST\n/api/public/v1/games/mtg/decks\n\nacme\n\
             e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_signature_verifies_only_for_the_same_request_and_secret() {
        let body = sha256(b"{}");
        let signed = request(&body).sign(b"secret");
        assert!(request(&body).verify(b"secret", &signed.mac));
        assert!(!request(&body).verify(b"secret2", &signed.mac));
        let other_body = sha256(b"{ }");
        assert!(!request(&other_body).verify(b"secret", &signed.mac));
        let other_path = CanonicalRequest {
            path: "/api/public/v1/games/mtg/decks/",
            ..request(&body)
        };
        assert!(!other_path.verify(b"secret", &signed.mac));
        let other_query = CanonicalRequest {
            query: "a=1",
            ..request(&body)
        };
        assert!(!other_query.verify(b"secret", &signed.mac));
        let other_slug = CanonicalRequest {
            partner_slug: "acme2",
            ..request(&body)
        };
        assert!(!other_slug.verify(b"secret", &signed.mac));
    }

    #[test]
    fn headers_round_trip_and_are_parsed_strictly() {
        let header = SignatureHeader {
            timestamp: 42,
            mac: [0xab; 32],
        };
        let rendered = header.render();
        assert_eq!(SignatureHeader::parse(&rendered), Ok(header));
        let hex64 = "ab".repeat(32);
        let malformed = [
            format!("v2.42.{hex64}"),
            format!("V1.42.{hex64}"),
            format!("v1.42.{}", hex64.to_uppercase()),
            format!("v1.42.{}", &hex64[..63]),
            format!("v1.42.{hex64}0"),
            format!("v1.42.{}zz", &hex64[..62]),
            format!("v1..{hex64}"),
            format!("v1.-42.{hex64}"),
            format!("v1.+42.{hex64}"),
            format!("v1.042.{hex64}"),
            format!("v1.00.{hex64}"),
            format!("v1.123456789012.{hex64}"),
            "v1.42".to_owned(),
            format!("v1.42.{hex64}.x"),
            format!(" v1.42.{hex64}"),
            format!("42.{hex64}"),
            String::new(),
        ];
        for value in malformed {
            assert_eq!(
                SignatureHeader::parse(&value),
                Err(MalformedSignature),
                "{value}"
            );
        }
        assert!(SignatureHeader::parse(&format!("v1.12345678901.{hex64}")).is_ok());
        assert!(SignatureHeader::parse(&format!("v1.0.{hex64}")).is_ok());
    }

    #[test]
    fn debug_output_hides_the_mac() {
        let header = SignatureHeader {
            timestamp: 1,
            mac: [0xcd; 32],
        };
        assert!(!format!("{header:?}").contains("cd"));
    }

    /// The worked example of `docs/partners.md`, byte for byte: the document cannot drift from
    /// the code, because this test reads it.
    #[test]
    fn the_documented_example_is_what_the_code_computes() {
        let doc = include_str!("../../../docs/partners.md");
        let block = |name: &str| -> String {
            let start = format!("<!-- example:{name} -->\n```text\n");
            let (_, rest) = doc
                .split_once(&start)
                .unwrap_or_else(|| panic!("docs/partners.md has no {name} block"));
            let (body, _) = rest.split_once("\n```").unwrap();
            body.to_owned()
        };
        let inputs = block("inputs");
        let field = |name: &str| -> String {
            inputs
                .lines()
                .find_map(|line| line.strip_prefix(&format!("{name}:")))
                .unwrap_or_else(|| panic!("no {name} in the example inputs"))
                .trim_start()
                .to_owned()
        };
        let body = field("body");
        let body_sha256 = sha256(body.as_bytes());
        let request = CanonicalRequest {
            timestamp: field("timestamp").parse().unwrap(),
            method: &field("method"),
            path: &field("path"),
            query: &field("query"),
            partner_slug: &field("partner"),
            body_sha256: &body_sha256,
        };
        assert_eq!(request.canonical_string(), block("canonical"));
        let header = request.sign(field("secret").as_bytes());
        assert_eq!(header.render(), block("signature"));
    }
}
