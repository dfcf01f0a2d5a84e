//! Introspection (RFC 7662) and revocation (RFC 7009) of a client's tokens.

use deckhand_auth::{TokenHash, TokenKind};
use time::OffsetDateTime;

use super::{ClientAuthentication, OAuthService, TokenError};
use crate::identity::{Scopes, UserId};
use crate::oauth::model::ClientId;
use crate::oauth::ports::GrantContext;
use crate::oauth::rules::{
    AccessTokenState, RefreshTokenState, access_token_state, refresh_token_state,
};

/// What introspection reports (RFC 7662).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Introspection {
    Inactive,
    Active {
        scope: Scopes,
        client_id: ClientId,
        user_id: UserId,
        expires_at: OffsetDateTime,
        issued_at: OffsetDateTime,
        token_type: &'static str,
        jkt: Option<String>,
    },
}

impl OAuthService {
    /// `POST /introspect`: what the token is, for the client it was issued to; inactive for
    /// anything else (another client's token, unknown, expired, revoked, inactive user or
    /// disabled partner).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn introspect(
        &self,
        presented: &ClientAuthentication,
        token: Option<&str>,
    ) -> Result<Introspection, TokenError> {
        let client = self.authenticate_client(presented).await?;
        let Some(token) = token else {
            return Ok(Introspection::Inactive);
        };
        let now = self.system.clock.now();
        let usable = |context: &GrantContext| {
            context.grant.client_id == client.id
                && context.user.active
                && context.partner.active
                && context.client.is_active()
        };
        let active = |context: GrantContext, scope, issued_at, expires_at| Introspection::Active {
            scope,
            client_id: client.id,
            user_id: context.user.id,
            expires_at,
            issued_at,
            token_type: context.grant.token_type(),
            jkt: context.grant.jkt,
        };
        if TokenKind::AccessToken.is_well_formed(token) {
            if let Some((stored, context)) = self
                .repository
                .find_access_token(&TokenHash::of(token))
                .await?
                && usable(&context)
                && access_token_state(&stored, &context.grant, now) == AccessTokenState::Active
            {
                return Ok(active(
                    context,
                    stored.scopes,
                    stored.issued_at,
                    stored.expires_at,
                ));
            }
        } else if TokenKind::RefreshToken.is_well_formed(token)
            && let Some((stored, context)) = self
                .repository
                .find_refresh_token(&TokenHash::of(token))
                .await?
            && usable(&context)
            && refresh_token_state(&stored, &context.grant, now) == RefreshTokenState::Current
        {
            let scope = context.grant.scopes.clone();
            return Ok(active(context, scope, stored.issued_at, stored.expires_at));
        }
        Ok(Introspection::Inactive)
    }

    /// `POST /revoke` (RFC 7009): an access token alone, or a refresh token's whole grant.
    /// Tokens of other clients and unknown tokens are left alone, and that is no error.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn revoke(
        &self,
        presented: &ClientAuthentication,
        token: Option<&str>,
    ) -> Result<(), TokenError> {
        let client = self.authenticate_client(presented).await?;
        let token = token.ok_or_else(|| TokenError::InvalidRequest("token is missing".into()))?;
        let now = self.system.clock.now();
        if TokenKind::AccessToken.is_well_formed(token) {
            let hash = TokenHash::of(token);
            if let Some((_, context)) = self.repository.find_access_token(&hash).await?
                && context.grant.client_id == client.id
            {
                self.repository.revoke_access_token(&hash, now).await?;
            }
        } else if TokenKind::RefreshToken.is_well_formed(token)
            && let Some((_, context)) = self
                .repository
                .find_refresh_token(&TokenHash::of(token))
                .await?
            && context.grant.client_id == client.id
        {
            self.repository.revoke_grant(context.grant.id, now).await?;
        }
        Ok(())
    }
}
