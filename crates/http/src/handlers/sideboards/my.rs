use actix_web::{HttpRequest, HttpResponse, get, web};
use deckhand_domain::identity::Lane;

use super::{GuideListQuery, SideboardGuidePage, page_response};
use crate::access::{GamePath, PathAccess, ReadSideboards};
use crate::conditional::IfNoneMatchHeader;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// The lanes that carry a user identity; partner-only lanes have none to call "mine".
const USER_LANES: [Lane; 4] = [
    Lane::PersonalAccessToken,
    Lane::PartnerSignatureWithPat,
    Lane::OAuthBearer,
    Lane::OAuthDpop,
];

/// The caller's own guides of a game, every visibility, never archived ones. Needs a user
/// identity: partner-only callers get 401. `authorId` is ignored (it is the caller).
#[utoipa::path(
    tag = "sideboard-guides",
    params(GamePath, GuideListQuery, IfNoneMatchHeader),
    responses(
        (status = 200, description = "A page of guides", body = SideboardGuidePage, headers(("ETag" = String, description = "Weak, over the page"))),
        (status = 304, description = "`If-None-Match` names the current page"),
        (status = 400, description = "A query parameter is invalid", body = ErrorEnvelope),
        (status = 401, description = "No credentials, or partner-only ones", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope), (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["sideboards:read"]),
        ("OAuth2" = ["sideboards:read"], "DPoP" = []),
        ("PersonalAccessToken" = ["sideboards:read"]),
        ("PartnerSignature" = ["sideboards:read"], "PartnerId" = [], "PersonalAccessToken" = ["sideboards:read"])
    )
)]
#[get("/games/{game}/sideboard-guides/my")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn my_guides(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<ReadSideboards, GamePath>,
    query: crate::query::Query<GuideListQuery>,
) -> Result<HttpResponse, ApiError> {
    principal.require_lane(&USER_LANES)?;
    let list = query.into_inner().into_request()?;
    let page = state
        .services
        .sideboard_guides
        .mine(&principal, &game, list.clone())
        .await?;
    page_response(&request, &state, &page, &list)
}
