//! Users and personal access tokens in memory.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use async_trait::async_trait;
use deckhand_auth::TokenHash;
use deckhand_domain::identity::ports::{
    InsertPatError, InsertUserError, PatRepository, UserRepository,
};
use deckhand_domain::identity::{PatId, PersonalAccessToken, User, UserId, Username};

use crate::Store;

/// The tables and the unique indexes PostgreSQL would keep.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    users: HashMap<UserId, User>,
    user_by_name: HashMap<Username, UserId>,
    pats: HashMap<PatId, PersonalAccessToken>,
    pat_by_hash: HashMap<TokenHash, PatId>,
}

impl Tables {
    /// A user's current username, as a join on `users` would read it.
    pub(crate) fn username_of(&self, id: UserId) -> Option<Username> {
        self.users.get(&id).map(|user| user.username.clone())
    }

    pub(crate) fn user(&self, id: UserId) -> Option<&User> {
        self.users.get(&id)
    }

    pub(crate) fn has_user(&self, id: UserId) -> bool {
        self.users.contains_key(&id)
    }
}

pub(crate) struct MemoryUsers(pub(crate) Store);

#[async_trait]
impl UserRepository for MemoryUsers {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, user: &User) -> Result<(), InsertUserError> {
        let mut state = self.0.lock();
        let tables = &mut state.identity;
        if tables.user_by_name.contains_key(&user.username) {
            return Err(InsertUserError::UsernameTaken);
        }
        // Like a primary-key violation in PostgreSQL: a bug, not a business outcome.
        let Entry::Vacant(slot) = tables.users.entry(user.id) else {
            return Err(anyhow::anyhow!("user {} already exists", user.id).into());
        };
        slot.insert(user.clone());
        tables.user_by_name.insert(user.username.clone(), user.id);
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_id(&self, id: UserId) -> anyhow::Result<Option<User>> {
        Ok(self.0.lock().identity.users.get(&id).cloned())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_username(&self, username: &Username) -> anyhow::Result<Option<User>> {
        let state = self.0.lock();
        let tables = &state.identity;
        Ok(tables
            .user_by_name
            .get(username)
            .and_then(|id| tables.users.get(id))
            .cloned())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn set_active(&self, id: UserId, active: bool) -> anyhow::Result<Option<User>> {
        let mut state = self.0.lock();
        Ok(state.identity.users.get_mut(&id).map(|user| {
            user.active = active;
            user.clone()
        }))
    }
}

pub(crate) struct MemoryPats(pub(crate) Store);

#[async_trait]
impl PatRepository for MemoryPats {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn insert(&self, pat: &PersonalAccessToken) -> Result<(), InsertPatError> {
        let mut state = self.0.lock();
        let tables = &mut state.identity;
        if !tables.users.contains_key(&pat.user_id) {
            return Err(InsertPatError::UnknownUser);
        }
        // A repeated id or hash is a bug (hashes of 256-bit random tokens do not collide).
        if tables.pat_by_hash.contains_key(&pat.token_hash) {
            return Err(anyhow::anyhow!("a token with this hash already exists").into());
        }
        let Entry::Vacant(slot) = tables.pats.entry(pat.id) else {
            return Err(anyhow::anyhow!("token {:?} already exists", pat.id).into());
        };
        slot.insert(pat.clone());
        tables.pat_by_hash.insert(pat.token_hash, pat.id);
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find_by_hash(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(PersonalAccessToken, User)>> {
        let state = self.0.lock();
        let tables = &state.identity;
        let Some(pat) = tables
            .pat_by_hash
            .get(hash)
            .and_then(|id| tables.pats.get(id))
        else {
            return Ok(None);
        };
        // Tokens cannot outlive their owner: `insert` checks it and nothing deletes users.
        let user = tables
            .users
            .get(&pat.user_id)
            .ok_or_else(|| anyhow::anyhow!("token {:?} has no owner", pat.id))?;
        Ok(Some((pat.clone(), user.clone())))
    }
}
