//! Settings the services need from the operator, validated by the app before they get here.

use crate::decks::DeckPolicy;
use crate::events::WaitLimits;
use crate::oauth::OAuthPolicy;
use crate::webhooks::DeliveryPolicy;

/// The 32-byte key that seals secrets at rest (`DECKHAND_SECRET_KEY`). Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey(pub [u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

/// What the services are configured with.
#[derive(Debug, Clone)]
pub struct ServiceSettings {
    /// Seals secrets at rest and keys stored hashes. Changing it makes existing secrets
    /// unreadable and restarts the pageview dedupe.
    pub secret_key: SecretKey,
    pub deck_policy: DeckPolicy,
    /// Lifetimes of OAuth codes, tokens and sign-in sessions.
    pub oauth: OAuthPolicy,
    /// Webhook targets, retries and timeout.
    pub webhooks: DeliveryPolicy,
    /// How long events stay in the feed (`DECKHAND_EVENT_RETENTION_DAYS`).
    pub event_retention: time::Duration,
    /// How many held feed requests a caller and the instance may hold
    /// (`DECKHAND_FEED_MAX_WAITERS`).
    pub feed_waits: WaitLimits,
}

impl ServiceSettings {
    pub fn new(secret_key: [u8; 32]) -> Self {
        Self {
            secret_key: SecretKey(secret_key),
            deck_policy: DeckPolicy::default(),
            oauth: OAuthPolicy::default(),
            webhooks: DeliveryPolicy::default(),
            event_retention: time::Duration::days(30),
            feed_waits: WaitLimits::default(),
        }
    }

    /// The key of the pageview visitor hashes: derived from the secret key, so every instance
    /// computes the same hash for a visitor while the secret key itself is never reused raw.
    pub(crate) fn visitor_key(&self) -> [u8; 32] {
        deckhand_auth::hmac_sha256(&self.secret_key.0, b"deckhand pageview visitors")
    }

    /// The key of the consent page's CSRF tokens, derived like the visitor key.
    pub(crate) fn csrf_key(&self) -> [u8; 32] {
        deckhand_auth::hmac_sha256(&self.secret_key.0, b"deckhand oauth csrf")
    }

    pub(crate) fn sealing_key(&self) -> deckhand_auth::SealingKey {
        deckhand_auth::SealingKey(self.secret_key.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_key_is_never_printed() {
        // The other settings print numbers of their own, so look for the key's bytes as a
        // derived Debug or a hex dump would print them.
        let shown = format!("{:?}", ServiceSettings::new([0xab; 32]));
        assert!(shown.contains("SecretKey(..)"), "{shown}");
        assert!(
            !shown.contains("171, 171") && !shown.contains("abab"),
            "{shown}"
        );
    }
}
