use actix_web::{HttpResponse, post, web};

use super::{GuideDetailDto, SideboardGuideBody};
use crate::access::{GamePath, PathAccess, WriteSideboards};
use crate::body::Body;
use crate::created::created;
use crate::dto::envelope::{ErrorEnvelope, IdempotencyFailures, ServiceFailures};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

/// Create a guide on one of the caller's decks (extension), owned by the caller (a
/// partner-only caller: its `created_by` user), with its first matchups.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GamePath, IdempotencyKeyHeader),
    request_body = SideboardGuideBody,
    responses(
        (status = 201, body = GuideDetailDto, headers(
            ("Location" = String, description = "The new guide's URL"),
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`"))),
        (status = 400, description = "`Idempotency-Key` is not 1 to 255 printable ASCII characters; or A field is invalid, or `deck_id` is not a deck of the caller (`details.fields`)", body = ErrorEnvelope),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
        IdempotencyFailures,
    ),
    security(("OAuth2" = ["sideboards:write"]))
)]
#[post(
    "/games/{game}/sideboard-guides",
    wrap = "actix_web::middleware::from_fn(crate::idempotency::idempotent)"
)]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn create_guide(
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<WriteSideboards, GamePath>,
    Body(body): Body<SideboardGuideBody>,
) -> Result<HttpResponse, ApiError> {
    let detail = state
        .services
        .sideboard_guides
        .create(&principal, &game, body.into())
        .await?;
    let location = format!(
        "/games/{}/sideboard-guides/{}",
        game.slug, detail.guide.id.0
    );
    Ok(created(&state, &location).json(GuideDetailDto::from(&detail)))
}
