use actix_web::{HttpRequest, HttpResponse, post, web};
use deckhand_domain::oauth::{IssuedTokenResponse, PresentedProof, TokenRequest};
use serde::Serialize;
use utoipa::ToSchema;

use super::form::Params;
use crate::auth::{Unreadable, dpop_header, public_uri};
use crate::oauth_error::{OAuthError, OAuthErrorBody, no_store};
use crate::state::HttpState;

/// The form of `POST /oauth/token`.
#[allow(dead_code)] // Documents the form for OpenAPI; the handler reads it through `Params`.
#[derive(ToSchema)]
pub struct TokenForm {
    /// `authorization_code` or `refresh_token`.
    grant_type: String,
    /// The authorization code (authorization_code).
    code: Option<String>,
    /// Exactly the `redirect_uri` of the authorization request (authorization_code).
    redirect_uri: Option<String>,
    /// The PKCE verifier, 43 to 128 characters (authorization_code).
    code_verifier: Option<String>,
    /// The refresh token (refresh_token).
    refresh_token: Option<String>,
    /// A narrower set of the grant's scopes, space-delimited (refresh_token).
    scope: Option<String>,
    /// Public clients only; confidential clients use HTTP Basic.
    client_id: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct TokenResponse {
    access_token: String,
    /// `Bearer`, or `DPoP` for tokens bound to a key.
    token_type: &'static str,
    /// Seconds until the access token expires.
    expires_in: i64,
    /// Absent for clients that may not refresh.
    #[serde(skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// The access token's scopes, space-delimited.
    scope: String,
}

impl std::fmt::Debug for TokenResponse {
    // The tokens are the credentials themselves: never print them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenResponse")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl From<IssuedTokenResponse> for TokenResponse {
    fn from(issued: IssuedTokenResponse) -> Self {
        Self {
            access_token: issued.access_token,
            token_type: issued.token_type,
            expires_in: issued.expires_in,
            refresh_token: issued.refresh_token,
            scope: issued.scope.names().join(" "),
        }
    }
}

/// The token endpoint (RFC 6749 §3.2): exchanges an authorization code (with its PKCE verifier)
/// or rotates a refresh token. Confidential clients authenticate with HTTP Basic; public
/// clients send no `Authorization`, only `client_id` in the form. With a `DPoP`
/// proof header (RFC 9449) the tokens are bound to the proof's key (`token_type` `DPoP`), and
/// refreshing a bound grant needs a proof by the same key.
#[utoipa::path(
    tag = "oauth",
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    params(
        ("DPoP" = Option<String>, Header, description = "A DPoP proof JWT (RFC 9449: typ dpop+jwt, ES256 or EdDSA, htm POST, htu this endpoint, no ath) binding the tokens to its key"),
    ),
    responses(
        (status = 200, body = TokenResponse, description = "Tokens; `Cache-Control: no-store`"),
        (status = 400, body = OAuthErrorBody, description = "invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope or invalid_dpop_proof"),
        (status = 401, body = OAuthErrorBody, description = "invalid_client"),
    ),
    // Basic is optional: public clients send `client_id` in the form and no `Authorization`
    // (the empty requirement says "or nothing").
    security(("OAuthClientBasic" = []), ())
)]
#[post("/oauth/token")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn token(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<HttpState>,
) -> Result<HttpResponse, OAuthError> {
    let params = Params::token_form(&request, payload).await?;
    let proof = dpop_header(request.headers()).map_err(|Unreadable| {
        OAuthError::invalid_dpop_proof("send exactly one DPoP header, of visible ASCII")
    })?;
    let token_request = TokenRequest {
        grant_type: params.get("grant_type"),
        code: params.get("code"),
        redirect_uri: params.get("redirect_uri"),
        code_verifier: params.get("code_verifier"),
        refresh_token: params.get("refresh_token"),
        scope: params.get("scope"),
        dpop: proof.map(|proof| PresentedProof {
            proof,
            method: request.method().as_str().to_owned(),
            uri: public_uri(&request, &state.config.public_url),
        }),
    };
    let issued = state
        .services
        .oauth
        .token(&params.client_authentication(&request), &token_request)
        .await?;
    Ok(no_store(HttpResponse::Ok()).json(TokenResponse::from(issued)))
}
