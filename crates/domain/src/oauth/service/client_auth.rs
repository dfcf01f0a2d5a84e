//! What the token, introspection and revocation endpoints share: how a request presents its
//! client, authenticating it, and their RFC 6749 §5.2 errors.

use deckhand_auth::{TokenHash, constant_time_eq};

use super::OAuthService;
use crate::oauth::model::{ClientKind, OAuthClient};

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

impl OAuthService {
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
}
