//! The OAuth server's records in memory. Redemption and rotation check and change a record
//! under the store's one lock, which is what makes exactly one of two concurrent uses win.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use async_trait::async_trait;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::{Partner, PartnerSlug, User};
use deckhand_domain::oauth::ports::{
    CodeRedemption, GrantContext, InsertClientError, IssuedTokens, OAuthRepository,
};
use deckhand_domain::oauth::{
    AccessToken, AuthorizationCode, ClientId, FailureCount, Grant, GrantId, OAuthClient,
    RefreshToken, Session, ThrottleKey,
};
use time::OffsetDateTime;

use crate::{State, Store};

#[derive(Debug, Default)]
pub(crate) struct Tables {
    clients: HashMap<ClientId, OAuthClient>,
    codes: HashMap<TokenHash, AuthorizationCode>,
    grants: HashMap<GrantId, Grant>,
    refresh_tokens: HashMap<TokenHash, RefreshToken>,
    access_tokens: HashMap<TokenHash, AccessToken>,
    sessions: HashMap<TokenHash, Session>,
    /// Spent DPoP proof ids by key thumbprint, until they expire.
    dpop_proofs: crate::ReplayRecords<(String, [u8; 32])>,
    /// Failed sign-ins by throttle key (`ThrottleKey::stored`).
    sign_in_failures: HashMap<String, FailureCount>,
}

pub(crate) struct MemoryOAuth(pub(crate) Store);

/// The grant with its client, partner and user, as the joins of the PostgreSQL adapter find
/// them. Rows cannot lose their parents: inserts check them and nothing deletes.
fn context(state: &State, grant_id: GrantId) -> anyhow::Result<GrantContext> {
    let grant = state
        .oauth
        .grants
        .get(&grant_id)
        .ok_or_else(|| anyhow::anyhow!("a token's grant {grant_id:?} is missing"))?;
    let client = state
        .oauth
        .clients
        .get(&grant.client_id)
        .ok_or_else(|| anyhow::anyhow!("grant {grant_id:?} has no client"))?;
    let partner = state
        .partners
        .partner(&client.partner)
        .ok_or_else(|| anyhow::anyhow!("client {} has no partner", client.id))?;
    let user = state
        .identity
        .user(grant.user_id)
        .ok_or_else(|| anyhow::anyhow!("grant {grant_id:?} has no user"))?;
    Ok(GrantContext {
        grant: grant.clone(),
        client: client.clone(),
        partner: partner.clone(),
        user: user.clone(),
    })
}

fn insert_tokens(tables: &mut Tables, tokens: &IssuedTokens) {
    tables
        .access_tokens
        .insert(tokens.access.token_hash, tokens.access.clone());
    if let Some(refresh) = &tokens.refresh {
        tables
            .refresh_tokens
            .insert(refresh.token_hash, refresh.clone());
    }
}

#[async_trait]
impl OAuthRepository for MemoryOAuth {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), InsertClientError> {
        let mut state = self.0.lock();
        if state.partners.partner(&client.partner).is_none() {
            return Err(InsertClientError::UnknownPartner);
        }
        let Entry::Vacant(slot) = state.oauth.clients.entry(client.id) else {
            return Err(anyhow::anyhow!("client {} already exists", client.id).into());
        };
        slot.insert(client.clone());
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list_clients(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<OAuthClient>> {
        let state = self.0.lock();
        let mut clients: Vec<OAuthClient> = state
            .oauth
            .clients
            .values()
            .filter(|client| partner.as_ref().is_none_or(|slug| client.partner == *slug))
            .cloned()
            .collect();
        clients.sort_by_key(|client| (client.created_at, client.id.0));
        Ok(clients)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn disable_client(
        &self,
        id: ClientId,
        at: OffsetDateTime,
    ) -> anyhow::Result<Option<OAuthClient>> {
        Ok(self.0.lock().oauth.clients.get_mut(&id).map(|client| {
            client.disabled_at.get_or_insert(at);
            client.clone()
        }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_client(&self, id: ClientId) -> anyhow::Result<Option<(OAuthClient, Partner)>> {
        let state = self.0.lock();
        let Some(client) = state.oauth.clients.get(&id) else {
            return Ok(None);
        };
        let partner = state
            .partners
            .partner(&client.partner)
            .ok_or_else(|| anyhow::anyhow!("client {id} has no partner"))?;
        Ok(Some((client.clone(), partner.clone())))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_code(&self, code: &AuthorizationCode) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        anyhow::ensure!(
            state.oauth.clients.contains_key(&code.client_id)
                && state.identity.has_user(code.user_id),
            "an authorization code needs an existing client and user"
        );
        let Entry::Vacant(slot) = state.oauth.codes.entry(code.code_hash) else {
            anyhow::bail!("an authorization code with this hash exists");
        };
        slot.insert(code.clone());
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_code(&self, hash: &TokenHash) -> anyhow::Result<Option<AuthorizationCode>> {
        Ok(self.0.lock().oauth.codes.get(hash).cloned())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn redeem_code(
        &self,
        hash: &TokenHash,
        now: OffsetDateTime,
        grant: &Grant,
        tokens: &IssuedTokens,
    ) -> anyhow::Result<CodeRedemption> {
        let mut state = self.0.lock();
        let tables = &mut state.oauth;
        let Some(code) = tables.codes.get_mut(hash) else {
            return Ok(CodeRedemption::Missing);
        };
        if code.redeemed_at.is_some() {
            return Ok(CodeRedemption::AlreadyRedeemed {
                grant_id: code.grant_id,
            });
        }
        code.redeemed_at = Some(now);
        code.grant_id = Some(grant.id);
        tables.grants.insert(grant.id, grant.clone());
        insert_tokens(tables, tokens);
        Ok(CodeRedemption::Redeemed)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_refresh_token(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(RefreshToken, GrantContext)>> {
        let state = self.0.lock();
        let Some(token) = state.oauth.refresh_tokens.get(hash) else {
            return Ok(None);
        };
        Ok(Some((token.clone(), context(&state, token.grant_id)?)))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn rotate_refresh_token(
        &self,
        hash: &TokenHash,
        now: OffsetDateTime,
        tokens: &IssuedTokens,
    ) -> anyhow::Result<bool> {
        let mut state = self.0.lock();
        let tables = &mut state.oauth;
        let Some(token) = tables.refresh_tokens.get(hash) else {
            return Ok(false);
        };
        let grant_live = tables
            .grants
            .get(&token.grant_id)
            .is_some_and(|grant| grant.revoked_at.is_none());
        if token.rotated_at.is_some() || token.expires_at <= now || !grant_live {
            return Ok(false);
        }
        if let Some(token) = tables.refresh_tokens.get_mut(hash) {
            token.rotated_at = Some(now);
        }
        insert_tokens(tables, tokens);
        Ok(true)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_access_token(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(AccessToken, GrantContext)>> {
        let state = self.0.lock();
        let Some(token) = state.oauth.access_tokens.get(hash) else {
            return Ok(None);
        };
        Ok(Some((token.clone(), context(&state, token.grant_id)?)))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn revoke_grant(&self, id: GrantId, at: OffsetDateTime) -> anyhow::Result<()> {
        if let Some(grant) = self.0.lock().oauth.grants.get_mut(&id) {
            grant.revoked_at.get_or_insert(at);
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn revoke_access_token(
        &self,
        hash: &TokenHash,
        at: OffsetDateTime,
    ) -> anyhow::Result<()> {
        if let Some(token) = self.0.lock().oauth.access_tokens.get_mut(hash) {
            token.revoked_at.get_or_insert(at);
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_dpop_proof_once(
        &self,
        jkt: &str,
        jti_hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        Ok(self.0.lock().oauth.dpop_proofs.record_once(
            (jkt.to_owned(), *jti_hash),
            now,
            expires_at,
        ))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert_session(&self, session: &Session) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        anyhow::ensure!(
            state.identity.has_user(session.user_id),
            "a session needs an existing user"
        );
        state
            .oauth
            .sessions
            .insert(session.token_hash, session.clone());
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_session(&self, hash: &TokenHash) -> anyhow::Result<Option<(Session, User)>> {
        let state = self.0.lock();
        let Some(session) = state.oauth.sessions.get(hash) else {
            return Ok(None);
        };
        let user = state
            .identity
            .user(session.user_id)
            .ok_or_else(|| anyhow::anyhow!("a session has no user"))?;
        Ok(Some((session.clone(), user.clone())))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn sign_in_failures(
        &self,
        keys: &[ThrottleKey],
    ) -> anyhow::Result<Vec<Option<FailureCount>>> {
        let state = self.0.lock();
        Ok(keys
            .iter()
            .map(|key| state.oauth.sign_in_failures.get(&key.stored()).copied())
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_sign_in_failure(
        &self,
        keys: &[ThrottleKey],
        now: OffsetDateTime,
        restart_before: OffsetDateTime,
    ) -> anyhow::Result<Vec<FailureCount>> {
        let mut state = self.0.lock();
        Ok(keys
            .iter()
            .map(|key| {
                let count =
                    state
                        .oauth
                        .sign_in_failures
                        .entry(key.stored())
                        .or_insert(FailureCount {
                            failures: 0,
                            last_failure_at: now,
                        });
                if count.last_failure_at <= restart_before {
                    count.failures = 0;
                }
                count.failures = count.failures.saturating_add(1);
                count.last_failure_at = now;
                *count
            })
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn clear_sign_in_failures(&self, key: &ThrottleKey) -> anyhow::Result<()> {
        self.0.lock().oauth.sign_in_failures.remove(&key.stored());
        Ok(())
    }
}

pub(crate) fn prune_codes(state: &mut State, before: OffsetDateTime, limit: u32) -> u64 {
    crate::prune_map(&mut state.oauth.codes, limit, |code| {
        code.expires_at <= before
    })
}

pub(crate) fn prune_sessions(state: &mut State, before: OffsetDateTime, limit: u32) -> u64 {
    crate::prune_map(&mut state.oauth.sessions, limit, |session| {
        session.expires_at <= before
    })
}

pub(crate) fn prune_expired_access_tokens(
    state: &mut State,
    before: OffsetDateTime,
    limit: u32,
) -> u64 {
    crate::prune_map(&mut state.oauth.access_tokens, limit, |token| {
        token.revoked_at.is_none() && token.expires_at <= before
    })
}

pub(crate) fn prune_revoked_access_tokens(
    state: &mut State,
    before: OffsetDateTime,
    limit: u32,
) -> u64 {
    crate::prune_map(&mut state.oauth.access_tokens, limit, |token| {
        token.revoked_at.is_some_and(|at| at <= before)
    })
}

pub(crate) fn prune_expired_refresh_tokens(
    state: &mut State,
    before: OffsetDateTime,
    limit: u32,
) -> u64 {
    crate::prune_map(&mut state.oauth.refresh_tokens, limit, |token| {
        token.expires_at <= before
    })
}

pub(crate) fn prune_revoked_refresh_tokens(
    state: &mut State,
    before: OffsetDateTime,
    limit: u32,
) -> u64 {
    let tables = &mut state.oauth;
    let grants = &tables.grants;
    crate::prune_map(&mut tables.refresh_tokens, limit, |token| {
        grants
            .get(&token.grant_id)
            .and_then(|grant| grant.revoked_at)
            .is_some_and(|at| at <= before)
    })
}

pub(crate) fn prune_grants_without_tokens(
    state: &mut State,
    before: OffsetDateTime,
    limit: u32,
) -> u64 {
    let tables = &mut state.oauth;
    let in_use: std::collections::HashSet<GrantId> = tables
        .access_tokens
        .values()
        .map(|token| token.grant_id)
        .chain(tables.refresh_tokens.values().map(|token| token.grant_id))
        .collect();
    crate::prune_map(&mut tables.grants, limit, |grant| {
        grant.created_at <= before && !in_use.contains(&grant.id)
    })
}

pub(crate) fn prune_dpop_proofs(state: &mut State, before: OffsetDateTime, limit: u32) -> u64 {
    state.oauth.dpop_proofs.prune(before, limit)
}

pub(crate) fn prune_sign_in_failures(state: &mut State, before: OffsetDateTime, limit: u32) -> u64 {
    crate::prune_map(&mut state.oauth.sign_in_failures, limit, |count| {
        count.last_failure_at <= before
    })
}
