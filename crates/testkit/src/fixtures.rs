//! Domain values for tests, valid and unique unless a test says otherwise.

use deckhand_auth::TokenHash;
use deckhand_domain::identity::{
    ApiKey, ApiKeyId, GameScopes, Partner, PartnerSlug, PatId, PersonalAccessToken, Scope, Scopes,
    Tier, User, UserId, Username,
};
use deckhand_domain::time::truncate_to_micros;
use time::OffsetDateTime;
use uuid::Uuid;

/// Now, as the domain's clock gives it: UTC, microsecond precision.
pub fn now() -> OffsetDateTime {
    truncate_to_micros(OffsetDateTime::now_utc())
}

/// # Panics
///
/// When `username` is not a valid username.
pub fn username(username: &str) -> Username {
    Username::parse(username).unwrap_or_else(|error| panic!("{username:?}: {error}"))
}

/// An active, non-premium user without a password.
pub fn user(name: &str) -> User {
    User {
        id: UserId(Uuid::now_v7()),
        username: username(name),
        active: true,
        premium: false,
        password_hash: None,
        created_at: now(),
    }
}

/// A usable token of `owner` with `decks:read`, whose hash matches no other token.
pub fn pat_for(owner: &User) -> PersonalAccessToken {
    PersonalAccessToken {
        id: PatId(Uuid::now_v7()),
        user_id: owner.id,
        name: None,
        token_hash: TokenHash::of(&Uuid::new_v4().to_string()),
        scopes: Scopes::from_iter([Scope::DecksRead]),
        created_at: now(),
        expires_at: None,
        revoked_at: None,
    }
}

/// An active partner of `owner` with `decks:read`, every game, the `partner` tier, and a
/// sealed secret of plausible shape (the stores never open it).
pub fn partner_for(owner: &User, slug: &str) -> Partner {
    Partner {
        slug: PartnerSlug::parse(slug).unwrap_or_else(|error| panic!("{slug:?}: {error}")),
        created_by: owner.id,
        scopes: Scopes::from_iter([Scope::DecksRead]),
        game_scopes: GameScopes::All,
        tier: Tier::partner(),
        sealed_secret: Uuid::new_v4().as_bytes().repeat(3),
        active: true,
        created_at: now(),
    }
}

/// A usable API key of `partner`, whose hash matches no other key.
pub fn api_key_for(partner: &Partner) -> ApiKey {
    ApiKey {
        id: ApiKeyId(Uuid::now_v7()),
        partner: partner.slug.clone(),
        key_hash: TokenHash::of(&Uuid::new_v4().to_string()),
        created_at: now(),
        revoked_at: None,
    }
}
