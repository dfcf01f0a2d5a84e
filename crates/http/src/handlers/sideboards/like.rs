//! The caller's like of a guide: `PUT` likes, `DELETE` withdraws the like; one toggle.

use actix_web::{HttpResponse, delete, put, web};
use utoipa::IntoResponses;

use crate::access::{GuidePath, PathAccess, WriteSideboards};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Like a guide the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once, `editedAt` does not move.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    responses(
        (status = 204, description = "Liked (again: nothing changes)"),
        LikeFailures,
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["sideboards:write"]),
        ("OAuth2" = ["sideboards:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["sideboards:write"]),
        ("PartnerSignature" = ["sideboards:write"], "PartnerId" = [], "PersonalAccessToken" = ["sideboards:write"])
    )
)]
#[put("/games/{game}/sideboard-guides/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %access.game.slug, guide = %access.path.id))]
pub async fn like_guide(
    state: web::Data<HttpState>,
    access: PathAccess<WriteSideboards, GuidePath>,
) -> Result<HttpResponse, ApiError> {
    set_like(&state, access, true).await
}

/// Withdraw the caller's like of a guide the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once, `editedAt` does not move.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    responses(
        (status = 204, description = "Not liked (again: nothing changes)"),
        LikeFailures,
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["sideboards:write"]),
        ("OAuth2" = ["sideboards:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["sideboards:write"]),
        ("PartnerSignature" = ["sideboards:write"], "PartnerId" = [], "PersonalAccessToken" = ["sideboards:write"])
    )
)]
#[delete("/games/{game}/sideboard-guides/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %access.game.slug, guide = %access.path.id))]
pub async fn unlike_guide(
    state: web::Data<HttpState>,
    access: PathAccess<WriteSideboards, GuidePath>,
) -> Result<HttpResponse, ApiError> {
    set_like(&state, access, false).await
}

/// What a like and its withdrawal may fail with.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "a description for the OpenAPI document, never built"
)]
enum LikeFailures {
    #[response(
        status = 401,
        description = "No credentials, or partner-only ones (a like needs a user)"
    )]
    NoUser(ErrorEnvelope),
    #[response(status = 403, description = "`sideboards:write` is missing")]
    MissingScope(ErrorEnvelope),
    #[response(status = 404, description = "No such guide, or hidden from the caller")]
    Hidden(ErrorEnvelope),
}

async fn set_like(
    state: &HttpState,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, GuidePath>,
    liked: bool,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .sideboard_guides
        .set_like(&principal, &game, path.id, liked)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
