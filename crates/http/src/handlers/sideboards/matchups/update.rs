use actix_web::{HttpResponse, patch, web};

use super::super::{MatchupBody, MatchupDto};
use crate::access::{MatchupPath, PathAccess, WriteSideboards};
use crate::body::Body;
use crate::error::ApiError;
use crate::state::HttpState;

/// Partial update of a matchup (owner only); `special_card_overrides` replaces the list.
#[utoipa::path(
    tag = "sideboard-guides",
    params(MatchupPath),
    request_body = MatchupBody,
    responses(
        (status = 200, body = MatchupDto),
        (status = 400, description = "Fields are invalid (`details.fields`, all of them)"),
        (status = 401), (status = 403),
        (status = 404, description = "No such guide or matchup, or not the caller's"),
    ),
    security(("OAuth2" = ["sideboards:write"]))
)]
#[patch("/games/{game}/sideboard-guides/{id}/matchups/{matchup_id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn update_matchup(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, MatchupPath>,
    Body(body): Body<MatchupBody>,
) -> Result<HttpResponse, ApiError> {
    let matchup = state
        .services
        .sideboard_guides
        .update_matchup(&principal, &game, path.id, path.matchup_id, body.into())
        .await?;
    Ok(HttpResponse::Ok().json(MatchupDto::from(&matchup)))
}
