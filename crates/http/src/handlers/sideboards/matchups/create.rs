use actix_web::{HttpResponse, post, web};

use super::super::{MatchupBody, MatchupDto};
use crate::access::{GuidePath, PathAccess, WriteSideboards};
use crate::body::Body;
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

/// Add a matchup to a guide (owner only); `opponent_deck_name` is required.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath, IdempotencyKeyHeader),
    request_body = MatchupBody,
    responses(
        (status = 201, body = MatchupDto),
        (status = 400, description = "Fields are invalid (`details.fields`, all of them)"),
        (status = 401), (status = 403),
        (status = 404, description = "No such guide, or not the caller's"),
    )
)]
#[post(
    "/games/{game}/sideboard-guides/{id}/matchups",
    wrap = "actix_web::middleware::from_fn(crate::idempotency::idempotent)"
)]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn create_matchup(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, GuidePath>,
    Body(body): Body<MatchupBody>,
) -> Result<HttpResponse, ApiError> {
    let matchup = state
        .services
        .sideboard_guides
        .add_matchup(&principal, &game, path.id, body.into())
        .await?;
    Ok(HttpResponse::Created().json(MatchupDto::from(&matchup)))
}
