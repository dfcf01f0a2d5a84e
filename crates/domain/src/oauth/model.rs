//! The OAuth server's records: clients, authorization codes, grants and their tokens, and the
//! sign-in sessions of the consent page. Secrets appear only as their SHA-256 hashes.

use std::collections::BTreeSet;

use deckhand_auth::TokenHash;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::identity::{PartnerSlug, Scopes, UserId};

/// A client's public identifier (a UUID, sent as `client_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(pub Uuid);

impl ClientId {
    /// The client a `client_id` parameter names, if it can name one at all.
    pub fn parse(input: &str) -> Option<Self> {
        Uuid::parse_str(input).ok().map(Self)
    }
}

impl std::fmt::Display for ClientId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A grant's id: the chain of tokens one authorization started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GrantId(pub Uuid);

/// How a client authenticates at the token, introspection and revocation endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientKind {
    /// HTTP Basic with the client secret, of which only the hash is kept.
    Confidential { secret_hash: TokenHash },
    /// No secret (a native or browser app): `client_id` in the body, PKCE proves the rest.
    Public,
}

/// The grant types a client may use; the server supports exactly these two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantType {
    AuthorizationCode,
    RefreshToken,
}

impl GrantType {
    pub const ALL: [GrantType; 2] = [GrantType::AuthorizationCode, GrantType::RefreshToken];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::RefreshToken => "refresh_token",
        }
    }

    pub fn parse(input: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == input)
    }
}

/// A redirect URI as registered: absolute, no fragment, matched byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RedirectUri(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a redirect URI must be an absolute URI without a fragment (https, http or an app scheme), at most 2000 characters: {0:?}"
)]
pub struct InvalidRedirectUri(pub String);

impl RedirectUri {
    pub fn parse(input: &str) -> Result<Self, InvalidRedirectUri> {
        let invalid = || InvalidRedirectUri(input.to_owned());
        let (scheme, rest) = input.split_once(':').ok_or_else(invalid)?;
        let scheme_ok = scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        let lower = scheme.to_ascii_lowercase();
        let dangerous = ["javascript", "data", "vbscript", "file"].contains(&lower.as_str());
        let web_without_host = (lower == "http" || lower == "https")
            && rest
                .strip_prefix("//")
                .is_none_or(|host| host.is_empty() || host.starts_with('/'));
        if !scheme_ok
            || dangerous
            || web_without_host
            || rest.is_empty()
            || input.len() > 2000
            || input.contains('#')
            || input.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(invalid());
        }
        Ok(Self(input.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An OAuth client, owned by a partner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    pub id: ClientId,
    pub partner: PartnerSlug,
    /// Shown to the user on the consent page.
    pub name: String,
    pub kind: ClientKind,
    pub redirect_uris: Vec<RedirectUri>,
    /// The scopes the client may ask for; a subset of its partner's.
    pub scopes: Scopes,
    pub grant_types: BTreeSet<GrantType>,
    pub created_at: OffsetDateTime,
    /// When an operator disabled it (`admin oauth-client disable`): it authorizes nothing and
    /// its tokens stop working at once.
    pub disabled_at: Option<OffsetDateTime>,
}

impl OAuthClient {
    pub fn is_active(&self) -> bool {
        self.disabled_at.is_none()
    }

    /// Whether `candidate` is registered, compared byte for byte.
    pub fn has_redirect_uri(&self, candidate: &str) -> bool {
        self.redirect_uris
            .iter()
            .any(|uri| uri.as_str() == candidate)
    }

    pub fn allows(&self, grant_type: GrantType) -> bool {
        self.grant_types.contains(&grant_type)
    }

    pub fn is_public(&self) -> bool {
        self.kind == ClientKind::Public
    }
}

/// An authorization code as stored, 10 minutes and single use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationCode {
    pub code_hash: TokenHash,
    pub client_id: ClientId,
    pub user_id: UserId,
    /// Exactly as sent to `/authorize`; `/token` must echo it byte for byte.
    pub redirect_uri: String,
    pub scopes: Scopes,
    /// The S256 `code_challenge`.
    pub code_challenge: String,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    /// When it was exchanged; set once, atomically.
    pub redeemed_at: Option<OffsetDateTime>,
    /// The grant the exchange started, revoked if the code is replayed.
    pub grant_id: Option<GrantId>,
}

/// One authorization of a client by a user: the refresh tokens rotate within it, and revoking
/// it revokes every token it issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: GrantId,
    pub client_id: ClientId,
    pub user_id: UserId,
    pub scopes: Scopes,
    /// The RFC 7638 thumbprint of the DPoP key the grant is bound to (`None`: Bearer).
    pub jkt: Option<String>,
    pub created_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

impl Grant {
    /// `Bearer`, or `DPoP` for a grant bound to a key.
    pub fn token_type(&self) -> &'static str {
        if self.jkt.is_some() { "DPoP" } else { "Bearer" }
    }
}

/// A refresh token as stored. Each use replaces it (rotation) and marks it `rotated_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshToken {
    pub token_hash: TokenHash,
    pub grant_id: GrantId,
    pub issued_at: OffsetDateTime,
    /// Idle expiry: each rotation issues a successor with a fresh lifetime.
    pub expires_at: OffsetDateTime,
    pub rotated_at: Option<OffsetDateTime>,
}

/// An access token as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub token_hash: TokenHash,
    pub grant_id: GrantId,
    /// The grant's scopes, or fewer when a refresh narrowed them.
    pub scopes: Scopes,
    pub issued_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub revoked_at: Option<OffsetDateTime>,
}

/// A signed-in browser on the consent page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub token_hash: TokenHash,
    pub user_id: UserId,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

/// The lifetimes of the OAuth server's credentials (`DECKHAND_*_TTL_SECS`) and its sign-in
/// throttling (`DECKHAND_SIGN_IN_DELAY_SECS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OAuthPolicy {
    pub access_token_ttl: time::Duration,
    pub auth_code_ttl: time::Duration,
    pub refresh_token_ttl: time::Duration,
    pub session_ttl: time::Duration,
    /// When the consent page refuses sign-ins after failed passwords.
    pub sign_in: super::throttle::SignInThrottle,
}

impl Default for OAuthPolicy {
    /// The contract's lifetimes: 1 h, 10 min, 30 days idle; sign-in sessions last 12 h.
    fn default() -> Self {
        Self {
            access_token_ttl: time::Duration::hours(1),
            auth_code_ttl: time::Duration::minutes(10),
            refresh_token_ttl: time::Duration::days(30),
            session_ttl: time::Duration::hours(12),
            sign_in: super::throttle::SignInThrottle::default(),
        }
    }
}
