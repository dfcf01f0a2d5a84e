use actix_web::{HttpResponse, post, web};

use super::super::{MatchupBody, MatchupDto};
use crate::access::{GuidePath, PathAccess, WriteSideboards};
use crate::body::Body;
use crate::created::created;
use crate::dto::envelope::{ErrorEnvelope, IdempotencyFailures, ServiceFailures};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

/// Add a matchup to a guide (owner only); `opponent_deck_name` is required.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath, IdempotencyKeyHeader),
    request_body = MatchupBody,
    responses(
        (status = 201, body = MatchupDto, headers(
            ("Location" = String, description = "The new matchup's URL"),
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`"))),
        (status = 400, description = "`Idempotency-Key` is not 1 to 255 printable ASCII characters; or Fields are invalid (`details.fields`, all of them)", body = ErrorEnvelope),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope),
        (status = 404, description = "No such guide, or not the caller's", body = ErrorEnvelope),
        ServiceFailures,
        IdempotencyFailures,
    ),
    security(("OAuth2" = ["sideboards:write"]))
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
    let location = format!(
        "/games/{}/sideboard-guides/{}/matchups/{}",
        game.slug, path.id, matchup.id.0
    );
    Ok(created(&state, &location).json(MatchupDto::from(&matchup)))
}
