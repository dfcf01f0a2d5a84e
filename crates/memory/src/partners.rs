//! Partners, their API keys and used signatures in memory.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use async_trait::async_trait;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{
    ApiKeyRepository, InsertApiKeyError, InsertPartnerError, PartnerRepository,
    SignatureReplayRepository,
};
use deckhand_domain::identity::{ApiKey, ApiKeyId, Partner, PartnerSlug};
use time::OffsetDateTime;

use crate::Store;

/// The tables and the unique indexes PostgreSQL would keep.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    partners: HashMap<PartnerSlug, Partner>,
    api_keys: HashMap<ApiKeyId, ApiKey>,
    api_key_by_hash: HashMap<TokenHash, ApiKeyId>,
    signature_replays: crate::ReplayRecords<(PartnerSlug, [u8; 32])>,
}

impl Tables {
    pub(crate) fn partner(&self, slug: &PartnerSlug) -> Option<&Partner> {
        self.partners.get(slug)
    }
}

pub(crate) struct MemoryPartners(pub(crate) Store);

#[async_trait]
impl PartnerRepository for MemoryPartners {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, partner: &Partner) -> Result<(), InsertPartnerError> {
        let mut state = self.0.lock();
        if !state.identity.has_user(partner.created_by) {
            return Err(InsertPartnerError::UnknownUser);
        }
        let Entry::Vacant(slot) = state.partners.partners.entry(partner.slug.clone()) else {
            return Err(InsertPartnerError::SlugTaken);
        };
        slot.insert(partner.clone());
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self) -> anyhow::Result<Vec<Partner>> {
        let state = self.0.lock();
        let mut partners: Vec<Partner> = state.partners.partners.values().cloned().collect();
        partners.sort_by(|a, b| a.slug.as_str().cmp(b.slug.as_str()));
        Ok(partners)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_slug(&self, slug: &PartnerSlug) -> anyhow::Result<Option<Partner>> {
        Ok(self.0.lock().partners.partners.get(slug).cloned())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn set_active(
        &self,
        slug: &PartnerSlug,
        active: bool,
    ) -> anyhow::Result<Option<Partner>> {
        let mut state = self.0.lock();
        Ok(state.partners.partners.get_mut(slug).map(|partner| {
            partner.active = active;
            partner.clone()
        }))
    }
}

pub(crate) struct MemoryApiKeys(pub(crate) Store);

#[async_trait]
impl ApiKeyRepository for MemoryApiKeys {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, key: &ApiKey) -> Result<(), InsertApiKeyError> {
        let mut state = self.0.lock();
        let tables = &mut state.partners;
        if !tables.partners.contains_key(&key.partner) {
            return Err(InsertApiKeyError::UnknownPartner);
        }
        if tables.api_key_by_hash.contains_key(&key.key_hash) {
            return Err(anyhow::anyhow!("an API key with this hash already exists").into());
        }
        let Entry::Vacant(slot) = tables.api_keys.entry(key.id) else {
            return Err(anyhow::anyhow!("API key {:?} already exists", key.id).into());
        };
        slot.insert(key.clone());
        tables.api_key_by_hash.insert(key.key_hash, key.id);
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_hash(&self, hash: &TokenHash) -> anyhow::Result<Option<(ApiKey, Partner)>> {
        let state = self.0.lock();
        let tables = &state.partners;
        let Some(key) = tables
            .api_key_by_hash
            .get(hash)
            .and_then(|id| tables.api_keys.get(id))
        else {
            return Ok(None);
        };
        // Keys cannot outlive their partner: `insert` checks it and nothing deletes partners.
        let partner = tables
            .partners
            .get(&key.partner)
            .ok_or_else(|| anyhow::anyhow!("API key {:?} has no partner", key.id))?;
        Ok(Some((key.clone(), partner.clone())))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn revoke(&self, id: ApiKeyId, at: OffsetDateTime) -> anyhow::Result<Option<ApiKey>> {
        let mut state = self.0.lock();
        Ok(state.partners.api_keys.get_mut(&id).map(|key| {
            key.revoked_at.get_or_insert(at);
            key.clone()
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<ApiKey>> {
        let state = self.0.lock();
        let mut keys: Vec<ApiKey> = state
            .partners
            .api_keys
            .values()
            .filter(|key| partner.as_ref().is_none_or(|slug| key.partner == *slug))
            .cloned()
            .collect();
        keys.sort_by_key(|key| (key.created_at, key.id.0));
        Ok(keys)
    }
}

pub(crate) struct MemorySignatureReplays(pub(crate) Store);

#[async_trait]
impl SignatureReplayRepository for MemorySignatureReplays {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_signature_once(
        &self,
        partner: &PartnerSlug,
        signature_hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        Ok(self.0.lock().partners.signature_replays.record_once(
            (partner.clone(), *signature_hash),
            now,
            expires_at,
        ))
    }
}

pub(crate) fn prune_signature_replays(
    state: &mut crate::State,
    before: OffsetDateTime,
    limit: u32,
) -> u64 {
    state.partners.signature_replays.prune(before, limit)
}
