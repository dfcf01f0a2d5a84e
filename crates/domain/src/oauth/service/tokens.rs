//! The token endpoint: an authorization code exchanged for tokens, a refresh token rotated,
//! both bound to the request's DPoP key when it sends a proof.

use deckhand_auth::{CheckedProof, TokenHash, TokenKind, mint_token};
use time::OffsetDateTime;

use super::{ClientAuthentication, OAuthService, TokenError};
use crate::identity::Scopes;
use crate::oauth::dpop::{PresentedProof, ProofRefused, key_matches, spend_jti};
use crate::oauth::model::{AccessToken, Grant, GrantId, GrantType, OAuthClient, RefreshToken};
use crate::oauth::ports::{CodeRedemption, IssuedTokens};
use crate::oauth::rules::{
    CodeState, RefreshTokenState, code_state, narrowed_scopes, refresh_token_state,
};

/// The form of a token request.
#[derive(Default, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    /// The request's `DPoP` proof header: the tokens are bound to its key.
    pub dpop: Option<PresentedProof>,
}

impl std::fmt::Debug for TokenRequest {
    // Codes, verifiers and refresh tokens never reach a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRequest")
            .field("grant_type", &self.grant_type)
            .field("redirect_uri", &self.redirect_uri)
            .field("scope", &self.scope)
            .field("dpop", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

/// A successful token response.
#[derive(Clone, PartialEq, Eq)]
pub struct IssuedTokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub refresh_token: Option<String>,
    pub scope: Scopes,
}

impl std::fmt::Debug for IssuedTokenResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedTokenResponse")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl OAuthService {
    /// `POST /token`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn token(
        &self,
        presented: &ClientAuthentication,
        request: &TokenRequest,
    ) -> Result<IssuedTokenResponse, TokenError> {
        let grant_type = request
            .grant_type
            .as_deref()
            .ok_or_else(|| TokenError::InvalidRequest("grant_type is missing".into()))?;
        let grant_type = GrantType::parse(grant_type).ok_or(TokenError::UnsupportedGrantType)?;
        let client = self.authenticate_client(presented).await?;
        if !client.allows(grant_type) {
            return Err(TokenError::UnauthorizedClient);
        }
        // The proof is checked before the grant is looked at, so a bad one costs no lookup.
        let proof = request
            .dpop
            .as_ref()
            .map(|proof| proof.check(None, self.system.clock.now()))
            .transpose()?;
        match grant_type {
            GrantType::AuthorizationCode => {
                self.exchange_code(&client, request, proof.as_ref()).await
            }
            GrantType::RefreshToken => self.refresh(&client, request, proof.as_ref()).await,
        }
    }

    /// Spends the proof's `jti` (when there is a proof): the last check before tokens are
    /// issued.
    async fn spend_proof(
        &self,
        proof: Option<&CheckedProof>,
        now: OffsetDateTime,
    ) -> Result<(), TokenError> {
        match proof {
            Some(proof) => Ok(spend_jti(self.repository.as_ref(), proof, now).await??),
            None => Ok(()),
        }
    }

    async fn exchange_code(
        &self,
        client: &OAuthClient,
        request: &TokenRequest,
        proof: Option<&CheckedProof>,
    ) -> Result<IssuedTokenResponse, TokenError> {
        let required = |value: &Option<String>, name: &str| {
            value
                .clone()
                .ok_or_else(|| TokenError::InvalidRequest(format!("{name} is missing")))
        };
        let code = required(&request.code, "code")?;
        let redirect_uri = required(&request.redirect_uri, "redirect_uri")?;
        let verifier = required(&request.code_verifier, "code_verifier")?;
        if !deckhand_auth::is_valid_code_verifier(&verifier) {
            return Err(TokenError::InvalidRequest(
                "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~".into(),
            ));
        }
        let invalid = |reason: &str| TokenError::InvalidGrant(reason.to_owned());
        let hash = TokenKind::AuthorizationCode
            .lookup_hash(&code)
            .ok_or_else(|| invalid("unknown authorization code"))?;
        let stored = self
            .repository
            .find_code(&hash)
            .await?
            .ok_or_else(|| invalid("unknown authorization code"))?;
        // Only a request that is otherwise valid may revoke anything: a stolen code alone
        // must not be able to log the user out.
        if stored.client_id != client.id {
            return Err(invalid("the code was issued to another client"));
        }
        if stored.redirect_uri != redirect_uri {
            return Err(invalid(
                "redirect_uri differs from the authorization request",
            ));
        }
        if !deckhand_auth::verify_s256(&verifier, &stored.code_challenge) {
            return Err(invalid("code_verifier does not match the code_challenge"));
        }
        let now = self.system.clock.now();
        match code_state(&stored, now) {
            CodeState::Redeemed => {
                self.revoke_replayed_code(stored.grant_id, now).await?;
                return Err(invalid("the code was used already; its tokens are revoked"));
            }
            CodeState::Expired => return Err(invalid("the code has expired")),
            CodeState::Fresh => {}
        }
        self.spend_proof(proof, now).await?;
        let grant = Grant {
            id: GrantId(self.system.ids.new_id()),
            client_id: client.id,
            user_id: stored.user_id,
            scopes: stored.scopes.clone(),
            jkt: proof.map(|proof| proof.jkt.clone()),
            created_at: now,
            revoked_at: None,
        };
        let (tokens, response) = self.mint_tokens(client, &grant, stored.scopes, now)?;
        match self
            .repository
            .redeem_code(&hash, now, &grant, &tokens)
            .await?
        {
            CodeRedemption::Redeemed => Ok(response),
            // Another exchange of the same code won the race: this one is the replay.
            CodeRedemption::AlreadyRedeemed { grant_id } => {
                self.revoke_replayed_code(grant_id, now).await?;
                Err(invalid("the code was used already; its tokens are revoked"))
            }
            CodeRedemption::Missing => Err(invalid("unknown authorization code")),
        }
    }

    async fn revoke_replayed_code(
        &self,
        grant_id: Option<GrantId>,
        now: OffsetDateTime,
    ) -> anyhow::Result<()> {
        if let Some(grant_id) = grant_id {
            self.repository.revoke_grant(grant_id, now).await?;
        }
        Ok(())
    }

    async fn refresh(
        &self,
        client: &OAuthClient,
        request: &TokenRequest,
        proof: Option<&CheckedProof>,
    ) -> Result<IssuedTokenResponse, TokenError> {
        let token = request
            .refresh_token
            .as_deref()
            .ok_or_else(|| TokenError::InvalidRequest("refresh_token is missing".into()))?;
        let invalid = |reason: &str| TokenError::InvalidGrant(reason.to_owned());
        let hash = TokenKind::RefreshToken
            .lookup_hash(token)
            .ok_or_else(|| invalid("unknown refresh token"))?;
        let (stored, context) = self
            .repository
            .find_refresh_token(&hash)
            .await?
            .ok_or_else(|| invalid("unknown refresh token"))?;
        if context.grant.client_id != client.id {
            return Err(invalid("the refresh token was issued to another client"));
        }
        // Before the token's state: without the key, a stolen bound refresh token can do
        // nothing at all, not even revoke its grant by replaying it.
        check_binding(context.grant.jkt.as_deref(), proof)?;
        let now = self.system.clock.now();
        match refresh_token_state(&stored, &context.grant, now) {
            RefreshTokenState::Revoked => return Err(invalid("the grant has been revoked")),
            RefreshTokenState::Rotated => {
                self.repository.revoke_grant(context.grant.id, now).await?;
                return Err(invalid(
                    "the refresh token was used already; the grant is revoked",
                ));
            }
            RefreshTokenState::Expired => return Err(invalid("the refresh token has expired")),
            RefreshTokenState::Current => {}
        }
        if !context.user.active {
            return Err(invalid("the user is no longer active"));
        }
        let scopes = narrowed_scopes(&context.grant.scopes, request.scope.as_deref())
            .map_err(|refused| TokenError::InvalidScope(refused.to_string()))?;
        self.spend_proof(proof, now).await?;
        let (tokens, response) = self.mint_tokens(client, &context.grant, scopes, now)?;
        if self
            .repository
            .rotate_refresh_token(&hash, now, &tokens)
            .await?
        {
            Ok(response)
        } else {
            // A concurrent use of the same token rotated it first: this use is a replay.
            self.repository.revoke_grant(context.grant.id, now).await?;
            Err(invalid(
                "the refresh token was used already; the grant is revoked",
            ))
        }
    }

    /// New access (and, when the client may refresh, refresh) tokens of `grant`.
    fn mint_tokens(
        &self,
        client: &OAuthClient,
        grant: &Grant,
        scopes: Scopes,
        now: OffsetDateTime,
    ) -> anyhow::Result<(IssuedTokens, IssuedTokenResponse)> {
        let access_token = mint_token(TokenKind::AccessToken, &self.system.random.bytes32()?);
        let refresh_token = if client.allows(GrantType::RefreshToken) {
            Some(mint_token(
                TokenKind::RefreshToken,
                &self.system.random.bytes32()?,
            ))
        } else {
            None
        };
        let tokens = IssuedTokens {
            access: AccessToken {
                token_hash: TokenHash::of(&access_token),
                grant_id: grant.id,
                scopes: scopes.clone(),
                issued_at: now,
                expires_at: now + self.policy.access_token_ttl,
                revoked_at: None,
            },
            refresh: refresh_token.as_ref().map(|token| RefreshToken {
                token_hash: TokenHash::of(token),
                grant_id: grant.id,
                issued_at: now,
                expires_at: now + self.policy.refresh_token_ttl,
                rotated_at: None,
            }),
        };
        let response = IssuedTokenResponse {
            access_token,
            token_type: grant.token_type(),
            expires_in: self.policy.access_token_ttl.whole_seconds(),
            refresh_token,
            scope: scopes,
        };
        Ok((tokens, response))
    }
}

/// Whether a refresh with `proof` fits the grant's binding: a bound grant needs a proof by
/// its key; an unbound grant takes no proof (its tokens stay Bearer for their whole life).
pub(super) fn check_binding(
    bound: Option<&str>,
    proof: Option<&CheckedProof>,
) -> Result<(), TokenError> {
    match (bound, proof) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(TokenError::InvalidDpopProof(
            "this grant is bound to a DPoP key: send a DPoP proof made with it".into(),
        )),
        (None, Some(_)) => Err(TokenError::InvalidDpopProof(
            "this grant is not bound to a DPoP key; refresh it without a DPoP proof".into(),
        )),
        (Some(bound), Some(proof)) => Ok(key_matches(Some(bound), &proof.jkt)?),
    }
}

impl From<ProofRefused> for TokenError {
    fn from(refused: ProofRefused) -> Self {
        Self::InvalidDpopProof(refused.0)
    }
}
