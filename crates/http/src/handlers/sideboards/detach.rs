use actix_web::{HttpResponse, delete, web};

use crate::access::{GuideDeckPath, PathAccess, WriteSideboards};
use crate::error::ApiError;
use crate::state::HttpState;

/// Detach a deck (owner only). The primary deck cannot be detached.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuideDeckPath),
    responses(
        (status = 204, description = "Detached"),
        (status = 400, description = "The primary deck"),
        (status = 401), (status = 403),
        (status = 404, description = "No such guide, not the caller's, or the deck is not attached"),
    ),
    security(("OAuth2" = ["sideboards:write"]))
)]
#[delete("/games/{game}/sideboard-guides/{id}/decks/{deck_id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn detach_deck(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, GuideDeckPath>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .sideboard_guides
        .detach(&principal, &game, path.id, path.deck_id)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
