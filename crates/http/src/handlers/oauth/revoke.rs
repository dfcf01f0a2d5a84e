use actix_web::{HttpRequest, HttpResponse, post, web};
use utoipa::ToSchema;

use super::form::Params;
use crate::oauth_error::{OAuthError, OAuthErrorBody, no_store};
use crate::state::HttpState;

/// The form of `POST /oauth/revoke`.
#[allow(dead_code)] // Documents the form for OpenAPI; the handler reads it through `Params`.
#[derive(ToSchema)]
pub struct RevokeForm {
    /// An access token (revoked alone) or a refresh token (its whole grant is revoked).
    token: String,
    /// Ignored: the token's prefix says what it is.
    token_type_hint: Option<String>,
    /// Public clients only.
    client_id: Option<String>,
}

/// Token revocation (RFC 7009). 200 with an empty body whether or not the token was live.
#[utoipa::path(
    tag = "oauth",
    request_body(content = RevokeForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "Revoked, or nothing to revoke"),
        (status = 400, body = OAuthErrorBody, description = "invalid_request: no token"),
        (status = 401, body = OAuthErrorBody, description = "invalid_client"),
    ),
    security(("OAuthClientBasic" = []), ())
)]
#[post("/oauth/revoke")]
pub async fn revoke(
    request: HttpRequest,
    body: web::Bytes,
    state: web::Data<HttpState>,
) -> Result<HttpResponse, OAuthError> {
    let params = Params::token_form(&request, &body)?;
    state
        .services
        .oauth
        .revoke(
            &params.client_authentication(&request),
            params.get("token").as_deref(),
        )
        .await?;
    Ok(no_store(HttpResponse::Ok()).finish())
}
