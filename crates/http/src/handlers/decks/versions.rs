use actix_web::http::header::EntityTag;
use actix_web::{HttpRequest, HttpResponse, get, web};

use deckhand_domain::decks::forked_from_as_seen;

use super::DeckVersionDto;
use crate::access::{DeckPath, PathAccess, ReadDecks, ReplicaMayServe};
use crate::conditional::{IfNoneMatchHeader, json_tagged};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// The deck's history, oldest first: position 1 is the create event.
#[utoipa::path(
    tag = "decks",
    params(DeckPath, IfNoneMatchHeader),
    responses(
        (status = 200, body = Vec<DeckVersionDto>, headers(("ETag" = String, description = "`\"<newest version number>\"`"))),
        (status = 304, description = "`If-None-Match` names the newest version"),
        (status = 403, body = ErrorEnvelope), (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks/{id}/versions")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn deck_versions(
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
    let history = state
        .services_on(database)
        .decks
        .versions(&principal, &game, deck)
        .await?;
    // The history only grows, so its newest number versions it.
    let newest = history
        .versions
        .last()
        .map_or(0, |version| version.version_number);
    let forked_from = forked_from_as_seen(history.fork.as_ref(), principal.acting_user());
    let body: Vec<DeckVersionDto> = history
        .versions
        .iter()
        .map(|version| DeckVersionDto::new(version, forked_from))
        .collect();
    json_tagged(&request, EntityTag::new_strong(newest.to_string()), &body)
}
