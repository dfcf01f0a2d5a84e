use actix_web::{HttpRequest, HttpResponse, get, web};

use super::{GuideDto, guide_etag};
use crate::access::{DeckPath, PathAccess, ReadDecks, ReplicaMayServe};
use crate::conditional::{IfNoneMatchHeader, json_tagged};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// The deck's strategy guide, or JSON `null` when it has none. A premium guide is cut to a
/// 200-character preview (`is_truncated`) for callers other than the owner and premium users.
#[utoipa::path(
    tag = "decks",
    params(DeckPath, IfNoneMatchHeader),
    responses(
        (status = 200, body = Option<GuideDto>, headers(("ETag" = String))),
        (status = 304, description = "`If-None-Match` names the current guide"),
        (status = 403, body = ErrorEnvelope), (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks/{id}/guide")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn read_guide(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        database,
        ..
    }: PathAccess<ReadDecks, DeckPath, ReplicaMayServe>,
) -> Result<HttpResponse, ApiError> {
    let guide = state
        .services_on(database)
        .decks
        .guide(&principal, &game, deck)
        .await?;
    let etag = guide_etag(guide.as_ref());
    let body = guide.map(GuideDto::from);
    json_tagged(&request, etag, &body)
}
