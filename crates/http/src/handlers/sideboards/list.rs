use actix_web::{HttpRequest, HttpResponse, get, web};

use super::{GuideListQuery, page_response};
use crate::access::{GamePath, PathAccess, ReadSideboards};
use crate::conditional::IfNoneMatchHeader;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Sideboard guides of a game: public ones plus the caller's own; never archived ones.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GamePath, GuideListQuery, IfNoneMatchHeader),
    responses(
        (status = 200, description = "`{data: [guide list item], pagination}`", body = inline(Object), headers(("ETag" = String, description = "Weak, over the page")), example = json!({"data": [{"id": "01a2c3d4-0000-7000-8000-000000000001", "name": "Stompy sideboard plan",
            "author": {"id": "01a1fd7f-5b1e-7c2a-9d3e-4f5a6b7c8d9e", "username": "demo"}, "game": "mtg",
            "visibility": ["public"], "deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "format": "Pauper",
            "views": 0, "likes": 3, "hasMatchups": true, "thumbnail": null,
            "editedAt": "2026-11-21T10:02:11.000001Z", "createdAt": "2026-11-21T10:02:11.000001Z",
            "sourceProvider": "manual"}],
        "pagination": {"page": 1, "limit": 20, "total": 1, "total_exact": true, "total_pages": 1,
            "next": null, "previous": null}})),
        (status = 304, description = "`If-None-Match` names the current page"),
        (status = 400, description = "A query parameter is invalid", body = ErrorEnvelope),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    )
)]
#[get("/games/{game}/sideboard-guides")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn list_guides(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<ReadSideboards, GamePath>,
    query: web::Query<GuideListQuery>,
) -> Result<HttpResponse, ApiError> {
    let list = query.into_inner().into_request()?;
    let page = state
        .services
        .sideboard_guides
        .list(&principal, &game, list.clone())
        .await?;
    page_response(&request, &state, &page, &list)
}
