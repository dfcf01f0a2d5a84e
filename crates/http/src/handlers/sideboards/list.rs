use actix_web::{HttpRequest, HttpResponse, get, web};

use super::{GuideListQuery, SideboardGuidePage, page_response};
use crate::access::{GamePath, PathAccess, ReadSideboards, ReplicaMayServe};
use crate::conditional::IfNoneMatchHeader;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Sideboard guides of a game: public ones plus the caller's own; never archived ones.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GamePath, GuideListQuery, IfNoneMatchHeader),
    responses(
        (status = 200, description = "A page of guides", body = SideboardGuidePage, headers(("ETag" = String, description = "Weak, over the page"))),
        (status = 304, description = "`If-None-Match` names the current page"),
        (status = 400, description = "A query parameter is invalid", body = ErrorEnvelope),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["sideboards:read"]))
)]
#[get("/games/{game}/sideboard-guides")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn list_guides(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        database,
        ..
    }: PathAccess<ReadSideboards, GamePath, ReplicaMayServe>,
    query: crate::query::Query<GuideListQuery>,
) -> Result<HttpResponse, ApiError> {
    let list = query.into_inner().into_request()?;
    let page = state
        .services_on(database)
        .sideboard_guides
        .list(&principal, &game, list.clone())
        .await?;
    page_response(&request, &state, &page, &list)
}
