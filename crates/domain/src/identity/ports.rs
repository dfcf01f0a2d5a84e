//! Identity ports. See the crate's error contract in [`crate::ports`].

use async_trait::async_trait;
use deckhand_auth::TokenHash;

use time::OffsetDateTime;

use super::{ApiKey, ApiKeyId, Partner, PartnerSlug, PersonalAccessToken, User, UserId, Username};

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

#[derive(Debug, thiserror::Error)]
pub enum InsertPartnerError {
    /// Another partner has this slug.
    #[error("slug taken")]
    SlugTaken,
    /// The `created_by` user does not exist.
    #[error("no such user")]
    UnknownUser,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PartnerRepository: Send + Sync {
    /// Stores a new partner. `SlugTaken` for a used slug, `UnknownUser` for a missing owner.
    async fn insert(&self, partner: &Partner) -> Result<(), InsertPartnerError>;
    /// The partner with this slug, active or not; the caller judges it.
    async fn find_by_slug(&self, slug: &PartnerSlug) -> anyhow::Result<Option<Partner>>;
    /// Every partner, by slug.
    async fn list(&self) -> anyhow::Result<Vec<Partner>>;
    /// Sets the active flag; `Ok(None)` when there is no such partner.
    async fn set_active(&self, slug: &PartnerSlug, active: bool)
    -> anyhow::Result<Option<Partner>>;
}

#[derive(Debug, thiserror::Error)]
pub enum InsertApiKeyError {
    /// The partner does not exist.
    #[error("no such partner")]
    UnknownPartner,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ApiKeyRepository: Send + Sync {
    /// Stores a new key (its hash). `UnknownPartner` when the partner does not exist.
    async fn insert(&self, key: &ApiKey) -> Result<(), InsertApiKeyError>;
    /// The key with this hash and its partner, whatever their state; the caller judges them.
    async fn find_by_hash(&self, hash: &TokenHash) -> anyhow::Result<Option<(ApiKey, Partner)>>;
    /// Marks the key revoked at `at` (an earlier revocation is kept); `Ok(None)` when there is
    /// no such key.
    async fn revoke(&self, id: ApiKeyId, at: OffsetDateTime) -> anyhow::Result<Option<ApiKey>>;
    /// Every API key (its hash only), or those of `partner`, oldest first.
    async fn list(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<ApiKey>>;
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SignatureReplayRepository: Send + Sync {
    /// Records that `partner` used the signature whose SHA-256 is `signature_hash`, until
    /// `expires_at`. True when it was not recorded yet (or only by a record expired at `now`);
    /// false when it was: a replay. Atomic across every instance on the store, and it prunes
    /// expired records as it goes.
    async fn record_signature_once(
        &self,
        partner: &PartnerSlug,
        signature_hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool>;
}
