//! The store of idempotency keys. See the crate's error contract in [`crate::ports`].

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Fingerprint, IdempotencyKey, StoredResponse};

/// A claim on a key: who holds it (the caller string), the key, and the claim's own id, so
/// that a first request overtaken as abandoned cannot complete or release its successor's
/// claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyClaim {
    pub caller: String,
    pub key: IdempotencyKey,
    pub claim_id: Uuid,
}

/// A new claim and the times that decide whether an existing record still holds the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest {
    pub claim: KeyClaim,
    pub fingerprint: Fingerprint,
    pub now: OffsetDateTime,
    /// When the new record expires.
    pub expires_at: OffsetDateTime,
    /// An unfinished record claimed at or before this is abandoned.
    pub abandoned_before: OffsetDateTime,
}

/// The record that holds a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub fingerprint: Fingerprint,
    /// `None` while its first request is still running.
    pub response: Option<StoredResponse>,
}

/// The outcome of a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// The key was free (never used, expired, or abandoned): the claim now holds it.
    Claimed,
    /// A live record holds the key.
    Held(KeyRecord),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IdempotencyRepository: Send + Sync {
    /// Claims `(caller, key)` unless a live record holds it: one that has not expired at
    /// `now` and is either finished or was claimed after `abandoned_before`. Atomic across
    /// every instance on the store (of two racing first claims exactly one wins; the other
    /// sees `Held`), and it prunes a few expired records of anyone as it goes.
    async fn claim(&self, request: &ClaimRequest) -> anyhow::Result<Claimed>;

    /// Stores `response` on the record of `claim`; nothing when another claim holds the key.
    async fn complete(&self, claim: &KeyClaim, response: &StoredResponse) -> anyhow::Result<()>;

    /// Deletes the unfinished record of `claim`, freeing the key; nothing when another claim
    /// holds the key.
    async fn release(&self, claim: &KeyClaim) -> anyhow::Result<()>;
}
