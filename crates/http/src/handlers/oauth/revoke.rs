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
    #[schema(min_length = 1)]
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
    // Basic is optional: public clients send `client_id` in the form and no `Authorization`
    // (the empty requirement says "or nothing").
    security(("OAuthClientBasic" = []), ())
)]
#[post("/oauth/revoke")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn revoke(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<HttpState>,
) -> Result<HttpResponse, OAuthError> {
    let params = Params::token_form(&request, payload).await?;
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
