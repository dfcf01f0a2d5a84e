//! The OAuth server's use cases: registering clients, the authorization request and consent,
//! the token endpoint (code exchange, refresh with rotation), introspection, revocation, and
//! the sign-in session and CSRF token of the consent page.

use std::collections::BTreeSet;
use std::sync::Arc;

use deckhand_auth::{CheckedProof, TokenHash, TokenKind, constant_time_eq, mint_token};
use time::OffsetDateTime;

use super::authorize::{
    AuthorizationParams, AuthorizationRequest, AuthorizeError, check_authorization,
};
use super::dpop::{PresentedProof, ProofRefused, key_matches, spend_jti};
use super::model::{
    AccessToken, AuthorizationCode, ClientId, ClientKind, Grant, GrantId, GrantType, OAuthClient,
    OAuthPolicy, RedirectUri, RefreshToken, Session,
};
use super::ports::{
    CodeRedemption, GrantContext, InsertClientError, IssuedTokens, OAuthRepository,
};
use super::rules::{
    AccessTokenState, CodeState, RefreshTokenState, access_token_state, code_state,
    narrowed_scopes, refresh_token_state,
};
use super::throttle::ThrottleKey;
use crate::identity::ports::{PartnerRepository, UserRepository};
use crate::identity::{Partner, PartnerSlug, Scopes, User, UserId, Username};
use crate::system::SystemPorts;

#[derive(Clone)]
pub struct OAuthService {
    repository: Arc<dyn OAuthRepository>,
    users: Arc<dyn UserRepository>,
    partners: Arc<dyn PartnerRepository>,
    system: SystemPorts,
    policy: OAuthPolicy,
    csrf_key: [u8; 32],
}

pub struct NewClientRequest {
    pub partner: PartnerSlug,
    pub name: String,
    pub redirect_uris: Vec<RedirectUri>,
    pub scopes: Scopes,
    pub public: bool,
    /// `None`: both grant types.
    pub grant_types: Option<BTreeSet<GrantType>>,
}

#[derive(Debug, thiserror::Error)]
pub enum CreateClientError {
    #[error("no such partner")]
    UnknownPartner,
    #[error("a client name is 1 to 100 characters")]
    InvalidName,
    #[error("a client needs at least one redirect URI")]
    NoRedirectUri,
    #[error("a client needs at least one scope")]
    NoScopes,
    #[error("the partner does not hold {0}; a client may ask only for its partner's scopes")]
    ScopeBeyondPartner(String),
    #[error("a client needs at least one grant type")]
    NoGrantTypes,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// How a request to the token, introspection or revocation endpoint presents its client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientAuthentication {
    /// `Authorization: Basic` (already decoded), `None` when absent.
    pub basic: Option<BasicCredentials>,
    /// An `Authorization` header that is not readable HTTP Basic.
    pub malformed_authorization: bool,
    /// `client_id` in the form body.
    pub body_client_id: Option<String>,
    /// Whether the form body carried `client_secret` (refused: Basic only).
    pub body_client_secret: bool,
}

#[derive(Clone, PartialEq, Eq)]
pub struct BasicCredentials {
    pub client_id: String,
    pub secret: String,
}

impl std::fmt::Debug for BasicCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicCredentials")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

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

/// The RFC 6749 §5.2 errors of the token, introspection and revocation endpoints.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidClient(String),
    #[error("{0}")]
    InvalidGrant(String),
    #[error("this client may not use this grant type")]
    UnauthorizedClient,
    #[error("grant_type must be authorization_code or refresh_token")]
    UnsupportedGrantType,
    #[error("{0}")]
    InvalidScope(String),
    /// The `DPoP` proof failed a check, or does not fit the grant's binding (RFC 9449 §5).
    #[error("{0}")]
    InvalidDpopProof(String),
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

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

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Wrong credentials; `retry_at` when this failure started a delay.
    #[error("the username or password is wrong")]
    InvalidCredentials { retry_at: Option<OffsetDateTime> },
    /// Too many failed sign-ins for this username or from this address: refused, without
    /// checking the password, until `retry_at`.
    #[error("too many failed sign-ins; try again later")]
    Throttled { retry_at: OffsetDateTime },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// An argon2id hash of a password nobody knows, verified when the user does not exist or has
/// no password, so that a wrong username costs as much time as a wrong password.
const DECOY_PASSWORD_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$SqlVzpRs4KmcPaxKgEi4fPdNoRgfAh4F8jhnUWNTv3A";

impl OAuthService {
    /// The OAuth server over its own repository and the users and partners it authenticates
    /// and authorizes for; `csrf_key` keys the consent page's CSRF tokens.
    pub fn new(
        repository: Arc<dyn OAuthRepository>,
        users: Arc<dyn UserRepository>,
        partners: Arc<dyn PartnerRepository>,
        system: SystemPorts,
        policy: OAuthPolicy,
        csrf_key: [u8; 32],
    ) -> Self {
        Self {
            repository,
            users,
            partners,
            system,
            policy,
            csrf_key,
        }
    }

    pub fn policy(&self) -> OAuthPolicy {
        self.policy
    }

    /// Registers a client and returns it with its one-time secret (`None` for public ones).
    // Spans record no arguments: they carry codes, tokens, secrets and passwords.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_client(
        &self,
        request: NewClientRequest,
    ) -> Result<(OAuthClient, Option<String>), CreateClientError> {
        let name = request.name.trim().to_owned();
        if !(1..=100).contains(&name.chars().count()) || name.chars().any(char::is_control) {
            return Err(CreateClientError::InvalidName);
        }
        if request.redirect_uris.is_empty() {
            return Err(CreateClientError::NoRedirectUri);
        }
        if request.scopes.is_empty() {
            return Err(CreateClientError::NoScopes);
        }
        let grant_types = request
            .grant_types
            .unwrap_or_else(|| GrantType::ALL.into_iter().collect());
        if grant_types.is_empty() {
            return Err(CreateClientError::NoGrantTypes);
        }
        let partner = self
            .partners
            .find_by_slug(&request.partner)
            .await?
            .ok_or(CreateClientError::UnknownPartner)?;
        if let Some(beyond) = request.scopes.iter().find(|s| !partner.scopes.contains(*s)) {
            return Err(CreateClientError::ScopeBeyondPartner(
                beyond.as_str().to_owned(),
            ));
        }
        let (kind, secret) = if request.public {
            (ClientKind::Public, None)
        } else {
            let secret = mint_token(TokenKind::ClientSecret, &self.system.random.bytes32()?);
            let kind = ClientKind::Confidential {
                secret_hash: TokenHash::of(&secret),
            };
            (kind, Some(secret))
        };
        let mut redirect_uris = request.redirect_uris;
        redirect_uris.dedup();
        let client = OAuthClient {
            id: ClientId(self.system.ids.new_id()),
            partner: request.partner,
            name,
            kind,
            redirect_uris,
            scopes: request.scopes,
            grant_types,
            created_at: self.system.clock.now(),
            disabled_at: None,
        };
        match self.repository.insert_client(&client).await {
            Ok(()) => Ok((client, secret)),
            Err(InsertClientError::UnknownPartner) => Err(CreateClientError::UnknownPartner),
            Err(InsertClientError::Unexpected(error)) => Err(error.into()),
        }
    }

    /// Every registered client, or those of `partner`, oldest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_clients(
        &self,
        partner: Option<PartnerSlug>,
    ) -> anyhow::Result<Vec<OAuthClient>> {
        self.repository.list_clients(partner).await
    }

    /// Disables a client: it authorizes nothing more and every token it was issued stops
    /// working at once (the lanes, introspection and the token endpoint judge the client on
    /// each use). `None` when there is no such client.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn disable_client(&self, id: ClientId) -> anyhow::Result<Option<OAuthClient>> {
        self.repository
            .disable_client(id, self.system.clock.now())
            .await
    }

    /// The client a `client_id` names, if it exists, is not disabled and its partner is
    /// active.
    async fn active_client(
        &self,
        client_id: &str,
    ) -> anyhow::Result<Option<(OAuthClient, Partner)>> {
        let Some(id) = ClientId::parse(client_id) else {
            return Ok(None);
        };
        Ok(self
            .repository
            .find_client(id)
            .await?
            .filter(|(client, partner)| partner.active && client.is_active()))
    }

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

    /// Checks a username and password and opens a session; returns the user and the cookie.
    /// `client` is the caller's address key (IPv4, or an IPv6 /64), when known. Refused
    /// without a password check while the username or the address is throttled
    /// ([`super::SignInThrottle`]); a failure is counted under both, a success forgets the
    /// username's count.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_in(
        &self,
        username: &str,
        password: &str,
        client: Option<&str>,
    ) -> Result<(User, String), SignInError> {
        let username = Username::parse(username).ok();
        let keys: Vec<ThrottleKey> = username
            .iter()
            .map(ThrottleKey::username)
            .chain(client.map(|ip| ThrottleKey::Ip(ip.to_owned())))
            .collect();
        let throttle = self.policy.sign_in;
        let now = self.system.clock.now();
        let counts = self.repository.sign_in_failures(&keys).await?;
        let counted: Vec<_> = keys
            .iter()
            .cloned()
            .zip(counts)
            .filter_map(|(key, count)| Some((key, count?)))
            .collect();
        if let Some(retry_at) = throttle.refused_until_any(&counted, now) {
            return Err(SignInError::Throttled { retry_at });
        }
        let user = match &username {
            Some(username) => self.users.find_by_username(username).await?,
            None => None,
        };
        let stored_hash = user
            .as_ref()
            .filter(|user| user.active)
            .and_then(|user| user.password_hash.clone());
        let has_password = stored_hash.is_some();
        let matches = self
            .system
            .passwords
            .verify(
                password,
                stored_hash.as_deref().unwrap_or(DECOY_PASSWORD_HASH),
            )
            .await?;
        let user = match (user, matches, has_password) {
            (Some(user), true, true) => user,
            _ => {
                let now = self.system.clock.now();
                let counts = self
                    .repository
                    .record_sign_in_failure(&keys, now, throttle.counts_restart_before(now))
                    .await?;
                let counted: Vec<_> = keys.into_iter().zip(counts).collect();
                let retry_at = throttle.refused_until_any(&counted, now);
                return Err(SignInError::InvalidCredentials { retry_at });
            }
        };
        if let Some(key) = keys
            .iter()
            .find(|key| matches!(key, ThrottleKey::Username(_)))
        {
            self.repository.clear_sign_in_failures(key).await?;
        }
        let cookie = mint_token(TokenKind::SessionCookie, &self.system.random.bytes32()?);
        let now = self.system.clock.now();
        self.repository
            .insert_session(&Session {
                token_hash: TokenHash::of(&cookie),
                user_id: user.id,
                created_at: now,
                expires_at: now + self.policy.session_ttl,
            })
            .await?;
        Ok((user, cookie))
    }

    /// The active user of a session cookie, if it names a live session.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn session_user(&self, cookie: &str) -> anyhow::Result<Option<User>> {
        let Some(hash) = TokenKind::SessionCookie.lookup_hash(cookie) else {
            return Ok(None);
        };
        let now = self.system.clock.now();
        Ok(self
            .repository
            .find_session(&hash)
            .await?
            .filter(|(session, user)| now < session.expires_at && user.active)
            .map(|(_, user)| user))
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

    /// Authenticates the client of a token, introspection or revocation request.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate_client(
        &self,
        presented: &ClientAuthentication,
    ) -> Result<OAuthClient, TokenError> {
        let refuse = |reason: &str| Err(TokenError::InvalidClient(reason.to_owned()));
        if presented.malformed_authorization {
            return refuse("the Authorization header is not HTTP Basic client credentials");
        }
        if presented.body_client_secret {
            return refuse("send the client secret with HTTP Basic, not in the body");
        }
        let client_id = match (&presented.basic, &presented.body_client_id) {
            (Some(basic), Some(body)) if basic.client_id != *body => {
                return refuse("client_id differs from the HTTP Basic user");
            }
            (Some(basic), _) => &basic.client_id,
            (None, Some(body)) => body,
            (None, None) => return refuse("client authentication is required"),
        };
        let Some((client, _)) = self.active_client(client_id).await? else {
            return refuse("unknown or disabled client");
        };
        match (&client.kind, &presented.basic) {
            (ClientKind::Confidential { secret_hash }, Some(basic)) => {
                let presented_hash = TokenHash::of(&basic.secret);
                if constant_time_eq(presented_hash.as_bytes(), secret_hash.as_bytes()) {
                    Ok(client)
                } else {
                    refuse("the client secret is wrong")
                }
            }
            (ClientKind::Confidential { .. }, None) => {
                refuse("this client authenticates with HTTP Basic")
            }
            (ClientKind::Public, Some(_)) => {
                refuse("a public client sends client_id in the body and no secret")
            }
            (ClientKind::Public, None) => Ok(client),
        }
    }

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

/// Whether a refresh with `proof` fits the grant's binding: a bound grant needs a proof by
/// its key; an unbound grant takes no proof (its tokens stay Bearer for their whole life).
fn check_binding(bound: Option<&str>, proof: Option<&CheckedProof>) -> Result<(), TokenError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use deckhand_auth::verify_password;

    #[test]
    fn a_refresh_must_fit_the_grants_dpop_binding() {
        let proof = |jkt: &str| CheckedProof {
            jkt: jkt.into(),
            jti: "j".into(),
        };
        assert!(check_binding(None, None).is_ok());
        assert!(check_binding(Some("key"), Some(&proof("key"))).is_ok());
        for (bound, presented) in [
            (Some("key"), None),
            (Some("key"), Some(proof("other"))),
            (None, Some(proof("key"))),
        ] {
            assert!(
                matches!(
                    check_binding(bound, presented.as_ref()),
                    Err(TokenError::InvalidDpopProof(_))
                ),
                "{bound:?} {presented:?}"
            );
        }
    }

    #[test]
    fn the_decoy_hash_parses_and_matches_nothing() {
        assert!(!verify_password("", DECOY_PASSWORD_HASH).unwrap());
        assert!(!verify_password("password", DECOY_PASSWORD_HASH).unwrap());
    }

    #[test]
    fn debug_output_of_requests_and_responses_hides_secrets() {
        let request = TokenRequest {
            grant_type: Some("authorization_code".into()),
            code: Some("dh_ac_secret".into()),
            code_verifier: Some("verifier-secret".into()),
            refresh_token: Some("dh_rt_secret".into()),
            ..TokenRequest::default()
        };
        let shown = format!("{request:?}");
        assert!(!shown.contains("secret"), "{shown}");
        let basic = BasicCredentials {
            client_id: "id".into(),
            secret: "dh_cs_secret".into(),
        };
        assert!(!format!("{basic:?}").contains("secret\""));
        assert!(!format!("{basic:?}").contains("dh_cs_"));
    }
}
