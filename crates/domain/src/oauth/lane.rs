//! The OAuth Bearer lane of the resource server: an access token becomes a principal acting
//! for its user through its client's partner, with the token's scopes.

use deckhand_auth::{TokenHash, TokenKind};
use time::OffsetDateTime;

use super::ports::OAuthRepository;
use super::rules::{AccessTokenState, access_token_state};
use crate::identity::{AuthError, Lane, Principal};

/// The principal of a Bearer access token. Order: unknown or malformed, inactive user or
/// disabled partner, and a DPoP-bound token on the Bearer lane (the downgrade defence) fail;
/// then a revoked token or grant, then an expired token.
pub(crate) async fn authenticate_bearer(
    repository: &dyn OAuthRepository,
    token: &str,
    now: OffsetDateTime,
) -> Result<Principal, AuthError> {
    if !TokenKind::AccessToken.is_well_formed(token) {
        return Err(AuthError::Failed);
    }
    let (stored, context) = repository
        .find_access_token(&TokenHash::of(token))
        .await?
        .ok_or(AuthError::Failed)?;
    if !context.user.active || !context.partner.active || context.grant.jkt.is_some() {
        return Err(AuthError::Failed);
    }
    match access_token_state(&stored, &context.grant, now) {
        AccessTokenState::Revoked => Err(AuthError::TokenRevoked),
        AccessTokenState::Expired => Err(AuthError::TokenExpired),
        AccessTokenState::Active => Ok(Principal {
            lane: Lane::OAuthBearer,
            user: Some((&context.user).into()),
            partner: Some(context.partner.reference()),
            scopes: stored.scopes,
        }),
    }
}
