//! Idempotent creates (`Idempotency-Key`, as payment APIs use it): the first request with a
//! key runs; a repeat by the same caller with the same request within [`KEY_LIFETIME`] gets
//! the stored response again and changes nothing. The rules live here: what scopes a key (the
//! caller), what makes two requests "the same" ([`Fingerprint`]), how long a key lives, which
//! responses are kept ([`is_kept`]) and when an unfinished first request counts as abandoned.
//! The store only claims, completes and releases keys atomically (see [`ports`]).

pub mod ports;
mod service;

pub use service::{Begin, Claim, IdempotencyError, IdempotencyService};

use time::Duration;

/// How long a key is remembered after its first request.
pub const KEY_LIFETIME: Duration = Duration::hours(24);

/// A first request that has not finished after this long is taken to have died with its
/// instance (a crash, a dropped connection): a retry may claim its key again. Well above the
/// store's statement timeout, so no live request is overtaken.
pub const ABANDONED_AFTER: Duration = Duration::seconds(60);

/// The most characters a key may have.
pub const MAX_KEY_LENGTH: usize = 255;

/// A client's idempotency key: 1 to 255 printable ASCII characters (space to `~`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// Why a key was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidKey {
    #[error("must be 1 to 255 characters")]
    Length,
    #[error("must be printable ASCII")]
    NotPrintable,
}

impl InvalidKey {
    /// The stable code of `details.fields[].code`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::NotPrintable => "invalid",
        }
    }
}

impl IdempotencyKey {
    pub fn parse(raw: &[u8]) -> Result<Self, InvalidKey> {
        if !raw.iter().all(|byte| (b' '..=b'~').contains(byte)) {
            return Err(InvalidKey::NotPrintable);
        }
        if raw.is_empty() || raw.len() > MAX_KEY_LENGTH {
            return Err(InvalidKey::Length);
        }
        // Printable ASCII is UTF-8.
        String::from_utf8(raw.to_vec())
            .map(Self)
            .map_err(|_| InvalidKey::NotPrintable)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What makes a repeat "the same request": the method, the path with its query, and the body
/// bytes. Other headers (`Content-Type`, `If-Match`, credentials) are not part of it: a retry
/// sends them unchanged, and the caller is the key's scope already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    pub fn of(method: &str, path_and_query: &str, body: &[u8]) -> Self {
        let body = deckhand_auth::sha256(body);
        let mut input = Vec::with_capacity(method.len() + path_and_query.len() + 2 + 64);
        input.extend_from_slice(method.as_bytes());
        input.push(b'\n');
        input.extend_from_slice(path_and_query.as_bytes());
        input.push(b'\n');
        input.extend_from_slice(&body);
        Self(deckhand_auth::sha256(&input))
    }
}

/// A response as it is kept for replays: the status, the headers a client relies on
/// (`Content-Type`, `ETag`, `Location`) and the body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// The response headers kept with a response (lower case).
pub const KEPT_HEADERS: [&str; 3] = ["content-type", "etag", "location"];

/// Whether a response is kept for replays. The operation ran and decided: successes and its
/// refusals (400, 404, 409, 412, 422) are kept, so a retry learns the same outcome, as payment
/// APIs do. Not kept, releasing the key for a retry: answers that mean the operation did not
/// run (401, 403: the credentials; 429: the quota) and server errors (5xx), after which a
/// retry is exactly what the client should do (every write is one transaction, so a failed
/// one left nothing behind).
pub fn is_kept(status: u16) -> bool {
    status < 500 && !matches!(status, 401 | 403 | 429)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_1_to_255_printable_ascii_characters() {
        assert!(IdempotencyKey::parse(b"a").is_ok());
        assert!(IdempotencyKey::parse(b"retry 1 ~!@#$%^&*()").is_ok());
        assert!(IdempotencyKey::parse("k".repeat(255).as_bytes()).is_ok());
        assert_eq!(IdempotencyKey::parse(b""), Err(InvalidKey::Length));
        assert_eq!(
            IdempotencyKey::parse("k".repeat(256).as_bytes()),
            Err(InvalidKey::Length)
        );
        for bad in [
            &b"tab\there"[..],
            b"new\nline",
            b"\x7f",
            "caf\u{e9}".as_bytes(),
        ] {
            assert_eq!(IdempotencyKey::parse(bad), Err(InvalidKey::NotPrintable));
        }
    }

    #[test]
    fn fingerprints_cover_method_path_and_body() {
        let base = Fingerprint::of("POST", "/a", b"{}");
        assert_eq!(base, Fingerprint::of("POST", "/a", b"{}"));
        assert_ne!(base, Fingerprint::of("PUT", "/a", b"{}"));
        assert_ne!(base, Fingerprint::of("POST", "/b", b"{}"));
        assert_ne!(base, Fingerprint::of("POST", "/a", b"{ }"));
        // The separator keeps the parts apart.
        assert_ne!(
            Fingerprint::of("POST", "/a\nx", b""),
            Fingerprint::of("POST", "/a", b"x")
        );
    }

    #[test]
    fn successes_and_refusals_are_kept_auth_quota_and_server_errors_are_not() {
        for status in [200, 201, 204, 400, 404, 409, 412, 422] {
            assert!(is_kept(status), "{status}");
        }
        for status in [401, 403, 429, 500, 502, 503] {
            assert!(!is_kept(status), "{status}");
        }
    }
}
