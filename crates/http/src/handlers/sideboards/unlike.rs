use actix_web::{HttpResponse, delete, web};

use crate::access::{GuidePath, PathAccess, WriteSideboards};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Withdraw the caller's like of a guide the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once, `editedAt` does not move.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    responses(
        (status = 204, description = "Not liked (again: nothing changes)"),
        (status = 401, description = "No credentials, or partner-only ones (a like needs a user)", body = ErrorEnvelope),
        (status = 403, description = "`sideboards:write` is missing", body = ErrorEnvelope),
        (status = 404, description = "No such guide, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    )
)]
#[delete("/games/{game}/sideboard-guides/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn unlike_guide(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, GuidePath>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .sideboard_guides
        .set_like(&principal, &game, path.id, false)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
