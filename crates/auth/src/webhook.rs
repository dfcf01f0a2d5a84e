//! The form of webhook secrets and signatures, exactly as the Standard Webhooks specification
//! defines them (<https://www.standardwebhooks.com/>), so that its libraries verify what we send.
//!
//! A secret is `whsec_` + standard base64 of 32 random bytes; the signing key is the decoded
//! bytes. A signature is `v1,` + standard base64 of HMAC-SHA256 over
//! `<webhook-id>.<webhook-timestamp>.<body>`; several are separated by single spaces.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::mac::hmac_sha256;

const SECRET_PREFIX: &str = "whsec_";

/// A webhook signing secret: the key bytes. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret([u8; 32]);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(..)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a webhook secret")]
pub struct MalformedWebhookSecret;

impl WebhookSecret {
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw key bytes (what is sealed at rest).
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The secret as shown to the partner: `whsec_` + base64.
    pub fn reveal(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(self.0))
    }

    /// Reads back what [`Self::reveal`] wrote (or the raw bytes as sealed).
    pub fn parse(text: &str) -> Result<Self, MalformedWebhookSecret> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(MalformedWebhookSecret)?;
        let bytes = STANDARD
            .decode(encoded)
            .map_err(|_| MalformedWebhookSecret)?;
        Self::try_from_slice(&bytes)
    }

    pub fn try_from_slice(bytes: &[u8]) -> Result<Self, MalformedWebhookSecret> {
        <[u8; 32]>::try_from(bytes)
            .map(Self)
            .map_err(|_| MalformedWebhookSecret)
    }

    /// One `v1,<base64>` signature of a message.
    pub fn sign(&self, webhook_id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut message = Vec::with_capacity(webhook_id.len() + body.len() + 24);
        message.extend_from_slice(webhook_id.as_bytes());
        message.push(b'.');
        message.extend_from_slice(timestamp.to_string().as_bytes());
        message.push(b'.');
        message.extend_from_slice(body);
        format!("v1,{}", STANDARD.encode(hmac_sha256(&self.0, &message)))
    }
}

/// The `webhook-signature` header value: one signature per secret, space-separated, in the
/// order given (the current secret first).
pub fn webhook_signature_header(
    secrets: &[WebhookSecret],
    webhook_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|secret| secret.sign(webhook_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_specification_example() {
        // The example of the Standard Webhooks specification (spec/standard-webhooks.md).
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").err();
        // That example key is 24 bytes, shorter than ours: sign with the primitive instead.
        assert_eq!(secret, Some(MalformedWebhookSecret));
        let key = STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let message = b"msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{\"test\": 2432232314}";
        let signature = STANDARD.encode(hmac_sha256(&key, message));
        assert_eq!(signature, "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_secret_reads_back_and_is_never_printed() {
        let secret = WebhookSecret::from_bytes([7; 32]);
        let shown = secret.reveal();
        assert!(shown.starts_with("whsec_"));
        assert_eq!(WebhookSecret::parse(&shown), Ok(secret.clone()));
        assert_eq!(format!("{secret:?}"), "WebhookSecret(..)");
        assert!(WebhookSecret::parse("whsec_!!").is_err());
        assert!(WebhookSecret::parse(&shown[1..]).is_err());
    }

    #[test]
    fn a_rotation_signs_with_both_secrets() {
        let new = WebhookSecret::from_bytes([1; 32]);
        let old = WebhookSecret::from_bytes([2; 32]);
        let header = webhook_signature_header(&[new.clone(), old.clone()], "id", 5, b"{}");
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(parts, [new.sign("id", 5, b"{}"), old.sign("id", 5, b"{}")]);
        assert!(parts.iter().all(|part| part.starts_with("v1,")));
    }
}
