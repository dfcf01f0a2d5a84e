//! The authorization request and the user's consent to it: the request's checks, the code an
//! approval mints, and the consent form's CSRF token.

use deckhand_auth::{TokenHash, TokenKind, constant_time_eq, mint_token};

use super::OAuthService;
use crate::identity::User;
use crate::oauth::authorize::{
    AuthorizationParams, AuthorizationRequest, AuthorizeError, check_authorization,
};
use crate::oauth::model::AuthorizationCode;

impl OAuthService {
    /// Checks an authorization request (see [`check_authorization`] for the order).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authorization_request(
        &self,
        params: &AuthorizationParams,
    ) -> Result<AuthorizationRequest, AuthorizeError> {
        let client = match params.client_id.as_deref() {
            Some(client_id) => self
                .active_client(client_id)
                .await?
                .map(|(client, _)| client),
            None => None,
        };
        check_authorization(client, params)
    }

    /// The user approved `request`: a new authorization code for it.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn approve(
        &self,
        request: &AuthorizationRequest,
        user: &User,
    ) -> anyhow::Result<String> {
        let code = mint_token(TokenKind::AuthorizationCode, &self.system.random.bytes32()?);
        let now = self.system.clock.now();
        self.repository
            .insert_code(&AuthorizationCode {
                code_hash: TokenHash::of(&code),
                client_id: request.client.id,
                user_id: user.id,
                redirect_uri: request.redirect_uri.clone(),
                scopes: request.scopes.clone(),
                code_challenge: request.code_challenge.clone(),
                created_at: now,
                expires_at: now + self.policy.auth_code_ttl,
                redeemed_at: None,
                grant_id: None,
            })
            .await?;
        Ok(code)
    }

    /// A fresh value for the cookie the consent form's CSRF token is bound to.
    pub fn new_csrf_cookie(&self) -> anyhow::Result<String> {
        Ok(mint_token(
            TokenKind::CsrfCookie,
            &self.system.random.bytes32()?,
        ))
    }

    /// The CSRF token of the consent form `request` shows to a browser holding the CSRF
    /// `cookie` and, when signed in, the `session` cookie: a MAC over all of them, so a page on
    /// another site can neither read nor forge it, a token shown to one browser session is
    /// worth nothing in another, a token of one authorization request approves no other
    /// (client, redirect URI, scopes, code challenge), and any instance can check it.
    pub fn csrf_token(
        &self,
        cookie: &str,
        session: Option<&str>,
        request: &AuthorizationRequest,
    ) -> String {
        let client = request.client.id.to_string();
        let scopes = request.scopes.names().join(" ");
        let parts: [&[u8]; 7] = [
            b"deckhand consent v2",
            cookie.as_bytes(),
            session.unwrap_or_default().as_bytes(),
            client.as_bytes(),
            request.redirect_uri.as_bytes(),
            scopes.as_bytes(),
            request.code_challenge.as_bytes(),
        ];
        // Each part prefixed by its length, so no two lists of parts read as the same bytes.
        let mut message = Vec::new();
        for part in parts {
            message.extend_from_slice(&u64::try_from(part.len()).unwrap_or(u64::MAX).to_be_bytes());
            message.extend_from_slice(part);
        }
        deckhand_auth::hex(&deckhand_auth::hmac_sha256(&self.csrf_key, &message))
    }

    /// Whether `token` is the CSRF token of this cookie, session and request (see
    /// [`Self::csrf_token`]), compared in constant time.
    pub fn csrf_matches(
        &self,
        cookie: &str,
        session: Option<&str>,
        request: &AuthorizationRequest,
        token: &str,
    ) -> bool {
        TokenKind::CsrfCookie.is_well_formed(cookie)
            && constant_time_eq(
                self.csrf_token(cookie, session, request).as_bytes(),
                token.as_bytes(),
            )
    }
}
