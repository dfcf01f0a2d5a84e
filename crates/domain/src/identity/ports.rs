//! Identity ports. See the crate's error contract in [`crate::ports`].

use async_trait::async_trait;
use deckhand_auth::TokenHash;

use super::{PersonalAccessToken, User, UserId, Username};

#[derive(Debug, thiserror::Error)]
pub enum InsertUserError {
    /// Another user already has this username.
    #[error("username taken")]
    UsernameTaken,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait UserRepository: Send + Sync {
    /// Stores a new user. `UsernameTaken` when the username is in use.
    async fn insert(&self, user: &User) -> Result<(), InsertUserError>;
    async fn find_by_id(&self, id: UserId) -> anyhow::Result<Option<User>>;
    async fn find_by_username(&self, username: &Username) -> anyhow::Result<Option<User>>;
    /// Sets the active flag; `Ok(None)` when there is no such user.
    async fn set_active(&self, id: UserId, active: bool) -> anyhow::Result<Option<User>>;
}

#[derive(Debug, thiserror::Error)]
pub enum InsertPatError {
    /// The owning user does not exist.
    #[error("no such user")]
    UnknownUser,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PatRepository: Send + Sync {
    /// Stores a new token (its hash). `UnknownUser` when the owner does not exist.
    async fn insert(&self, pat: &PersonalAccessToken) -> Result<(), InsertPatError>;
    /// The token with this hash and its owner, whatever their state; the caller judges them.
    async fn find_by_hash(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(PersonalAccessToken, User)>>;
}
