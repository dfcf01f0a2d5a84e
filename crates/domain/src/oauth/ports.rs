//! The OAuth server's port. See the crate's error contract in [`crate::ports`].

use async_trait::async_trait;
use deckhand_auth::TokenHash;
use time::OffsetDateTime;

use super::model::{
    AccessToken, AuthorizationCode, ClientId, Grant, GrantId, OAuthClient, RefreshToken, Session,
};
use super::throttle::{FailureCount, ThrottleKey};
use crate::identity::{Partner, PartnerSlug, User};

#[derive(Debug, thiserror::Error)]
pub enum InsertClientError {
    /// The owning partner does not exist.
    #[error("no such partner")]
    UnknownPartner,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// A grant with everything a token of it is judged by: its client, the client's partner and
/// the user, each in its current state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantContext {
    pub grant: Grant,
    pub client: OAuthClient,
    pub partner: Partner,
    pub user: User,
}

/// The tokens one exchange or refresh issues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedTokens {
    pub access: AccessToken,
    /// `None` for a client that may not use refresh tokens.
    pub refresh: Option<RefreshToken>,
}

/// What [`OAuthRepository::redeem_code`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRedemption {
    /// The code was fresh: it is now redeemed, and the grant and tokens are stored.
    Redeemed,
    /// The code had been redeemed already (it names the grant that redemption started):
    /// nothing was stored.
    AlreadyRedeemed { grant_id: Option<GrantId> },
    /// No code has this hash.
    Missing,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait OAuthRepository: Send + Sync {
    /// Stores a new client. `UnknownPartner` when its partner does not exist.
    async fn insert_client(&self, client: &OAuthClient) -> Result<(), InsertClientError>;
    /// Every client, or those of `partner`, oldest first.
    async fn list_clients(&self, partner: Option<PartnerSlug>) -> anyhow::Result<Vec<OAuthClient>>;
    /// Disables the client at `at` (an earlier time is kept); `None` when there is no such
    /// client.
    async fn disable_client(
        &self,
        id: ClientId,
        at: OffsetDateTime,
    ) -> anyhow::Result<Option<OAuthClient>>;
    /// The client and its partner, whatever their state; the caller judges them.
    async fn find_client(&self, id: ClientId) -> anyhow::Result<Option<(OAuthClient, Partner)>>;

    /// Stores a new authorization code (its hash).
    async fn insert_code(&self, code: &AuthorizationCode) -> anyhow::Result<()>;
    /// The code with this hash, redeemed or not.
    async fn find_code(&self, hash: &TokenHash) -> anyhow::Result<Option<AuthorizationCode>>;
    /// In one transaction: marks the code redeemed at `now` (recording `grant`'s id) if and
    /// only if it is not redeemed yet, and then stores `grant` and `tokens`. Of two concurrent
    /// redemptions exactly one gets `Redeemed`.
    async fn redeem_code(
        &self,
        hash: &TokenHash,
        now: OffsetDateTime,
        grant: &Grant,
        tokens: &IssuedTokens,
    ) -> anyhow::Result<CodeRedemption>;

    /// The refresh token with this hash and its grant's context, whatever their state.
    async fn find_refresh_token(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(RefreshToken, GrantContext)>>;
    /// In one transaction: marks the refresh token rotated at `now` if and only if it is not
    /// rotated yet, has not expired at `now` and its grant is not revoked, and then stores
    /// `tokens` (of the same grant). True when it rotated; false, with nothing changed,
    /// otherwise. Of two concurrent rotations of one token exactly one gets true: a single
    /// conditional update (or a row lock), never a read followed by a write.
    async fn rotate_refresh_token(
        &self,
        hash: &TokenHash,
        now: OffsetDateTime,
        tokens: &IssuedTokens,
    ) -> anyhow::Result<bool>;

    /// The access token with this hash and its grant's context, whatever their state.
    async fn find_access_token(
        &self,
        hash: &TokenHash,
    ) -> anyhow::Result<Option<(AccessToken, GrantContext)>>;

    /// Revokes the grant, and with it every token it issued (an earlier revocation time is
    /// kept). A missing grant is not an error.
    async fn revoke_grant(&self, id: GrantId, at: OffsetDateTime) -> anyhow::Result<()>;
    /// Revokes one access token (an earlier revocation time is kept). A missing token is not
    /// an error.
    async fn revoke_access_token(&self, hash: &TokenHash, at: OffsetDateTime)
    -> anyhow::Result<()>;

    /// Records that the DPoP key with thumbprint `jkt` used the proof id whose SHA-256 is
    /// `jti_hash`, until `expires_at`. True when it was not recorded yet (or only by a record
    /// expired at `now`); false when it was: a replay. Atomic across every instance on the
    /// store (of two concurrent records exactly one gets true), and it prunes expired records
    /// as it goes.
    async fn record_dpop_proof_once(
        &self,
        jkt: &str,
        jti_hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Stores a sign-in session of the consent page (its cookie's hash).
    async fn insert_session(&self, session: &Session) -> anyhow::Result<()>;
    /// The session with this hash and its user, whatever their state.
    async fn find_session(&self, hash: &TokenHash) -> anyhow::Result<Option<(Session, User)>>;

    /// The failed sign-ins counted under each of `keys`, in their order (`None`: none).
    async fn sign_in_failures(
        &self,
        keys: &[ThrottleKey],
    ) -> anyhow::Result<Vec<Option<FailureCount>>>;
    /// Counts one failed sign-in at `now` under each of `keys`, in one transaction, and returns
    /// the new counts in their order. A count whose last failure is at or before
    /// `restart_before` starts again at one. Each count is one atomic statement (instances
    /// failing at once never lose a failure).
    async fn record_sign_in_failure(
        &self,
        keys: &[ThrottleKey],
        now: OffsetDateTime,
        restart_before: OffsetDateTime,
    ) -> anyhow::Result<Vec<FailureCount>>;
    /// Forgets the failures counted under `key`.
    async fn clear_sign_in_failures(&self, key: &ThrottleKey) -> anyhow::Result<()>;
}
