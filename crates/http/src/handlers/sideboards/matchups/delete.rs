use actix_web::{HttpResponse, delete, web};

use crate::access::{MatchupPath, PathAccess, WriteSideboards};
use crate::error::ApiError;
use crate::state::HttpState;

/// Delete a matchup (owner only).
#[utoipa::path(
    tag = "sideboard-guides",
    params(MatchupPath),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401), (status = 403),
        (status = 404, description = "No such guide or matchup, or not the caller's"),
    ),
    security(("OAuth2" = ["sideboards:write"]))
)]
#[delete("/games/{game}/sideboard-guides/{id}/matchups/{matchup_id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn delete_matchup(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, MatchupPath>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .sideboard_guides
        .delete_matchup(&principal, &game, path.id, path.matchup_id)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
