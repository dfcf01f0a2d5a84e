//! Idempotency keys in memory: claims are decided under the store's lock, so of two racing
//! first requests exactly one claims the key, as the PostgreSQL primary key decides there.

use std::collections::HashMap;

use async_trait::async_trait;
use deckhand_domain::idempotency::ports::{
    ClaimRequest, Claimed, IdempotencyRepository, KeyClaim, KeyRecord,
};
use deckhand_domain::idempotency::{Fingerprint, StoredResponse};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Store;

#[derive(Debug, Default)]
pub(crate) struct Tables {
    /// By (caller, key).
    keys: HashMap<(String, String), Record>,
}

#[derive(Debug)]
struct Record {
    fingerprint: Fingerprint,
    claim_id: Uuid,
    claimed_at: OffsetDateTime,
    expires_at: OffsetDateTime,
    response: Option<StoredResponse>,
}

fn slot(claim: &KeyClaim) -> (String, String) {
    (claim.caller.clone(), claim.key.as_str().to_owned())
}

pub(crate) struct MemoryIdempotencyKeys(pub(crate) Store);

#[async_trait]
impl IdempotencyRepository for MemoryIdempotencyKeys {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn claim(&self, request: &ClaimRequest) -> anyhow::Result<Claimed> {
        let mut state = self.0.lock();
        let keys = &mut state.idempotency.keys;
        // Pruning under the same lock keeps the map as small as the live window.
        keys.retain(|_, record| record.expires_at > request.now);
        let slot = slot(&request.claim);
        if let Some(record) = keys.get(&slot) {
            let abandoned =
                record.response.is_none() && record.claimed_at <= request.abandoned_before;
            if !abandoned {
                return Ok(Claimed::Held(KeyRecord {
                    fingerprint: record.fingerprint,
                    response: record.response.clone(),
                }));
            }
        }
        keys.insert(
            slot,
            Record {
                fingerprint: request.fingerprint,
                claim_id: request.claim.claim_id,
                claimed_at: request.now,
                expires_at: request.expires_at,
                response: None,
            },
        );
        Ok(Claimed::Claimed)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn complete(&self, claim: &KeyClaim, response: &StoredResponse) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        if let Some(record) = state.idempotency.keys.get_mut(&slot(claim))
            && record.claim_id == claim.claim_id
        {
            record.response = Some(response.clone());
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn release(&self, claim: &KeyClaim) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        let keys = &mut state.idempotency.keys;
        let slot = slot(claim);
        if keys
            .get(&slot)
            .is_some_and(|record| record.claim_id == claim.claim_id && record.response.is_none())
        {
            keys.remove(&slot);
        }
        Ok(())
    }
}

pub(crate) fn prune_keys(state: &mut crate::State, before: OffsetDateTime, limit: u32) -> u64 {
    crate::prune_map(&mut state.idempotency.keys, limit, |record| {
        record.expires_at <= before
    })
}
