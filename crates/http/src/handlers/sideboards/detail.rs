use actix_web::{HttpRequest, HttpResponse, get, web};

use super::GuideDetailDto;
use crate::access::{GuidePath, PathAccess, ReadSideboards, ReplicaMayServe};
use crate::conditional::{IfNoneMatchHeader, json_strong};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// The guide detail (public spec 2.6) with its matchups and the decks the caller may see.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath, IfNoneMatchHeader),
    responses(
        (status = 200, body = GuideDetailDto, headers(("ETag" = String, description = "Strong, over the representation: it changes whenever any byte of it would"))),
        (status = 304, description = "`If-None-Match` names the current representation"),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope),
        (status = 404, description = "No such guide, or one the caller may not see", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["sideboards:read"]))
)]
#[get("/games/{game}/sideboard-guides/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn guide_detail(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        database,
        ..
    }: PathAccess<ReadSideboards, GuidePath, ReplicaMayServe>,
) -> Result<HttpResponse, ApiError> {
    let detail = state
        .services_on(database)
        .sideboard_guides
        .get(&principal, &game, path.id)
        .await?;
    json_strong(&request, &GuideDetailDto::from(&detail))
}
