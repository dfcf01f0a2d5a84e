use actix_web::{HttpRequest, HttpResponse, post, web};
use deckhand_domain::oauth::{IssuedTokenResponse, TokenRequest};
use serde::Serialize;
use utoipa::ToSchema;

use super::form::Params;
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

#[derive(Debug, Serialize, ToSchema)]
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
/// or rotates a refresh token. Confidential clients authenticate with HTTP Basic.
#[utoipa::path(
    tag = "oauth",
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, body = TokenResponse, description = "Tokens; `Cache-Control: no-store`"),
        (status = 400, body = OAuthErrorBody, description = "invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope"),
        (status = 401, body = OAuthErrorBody, description = "invalid_client"),
    ),
    security(("OAuthClientBasic" = []))
)]
#[post("/oauth/token")]
pub async fn token(
    request: HttpRequest,
    body: web::Bytes,
    state: web::Data<HttpState>,
) -> Result<HttpResponse, OAuthError> {
    let params = Params::token_form(&request, &body)?;
    let token_request = TokenRequest {
        grant_type: params.get("grant_type"),
        code: params.get("code"),
        redirect_uri: params.get("redirect_uri"),
        code_verifier: params.get("code_verifier"),
        refresh_token: params.get("refresh_token"),
        scope: params.get("scope"),
    };
    let issued = state
        .services
        .oauth
        .token(&params.client_authentication(&request), &token_request)
        .await?;
    Ok(no_store(HttpResponse::Ok()).json(TokenResponse::from(issued)))
}
