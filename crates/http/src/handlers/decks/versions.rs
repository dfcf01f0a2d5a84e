use actix_web::{HttpResponse, get, web};

use super::DeckVersionDto;
use crate::access::{DeckAccess, DeckPath, ReadDecks};
use crate::error::ApiError;
use crate::state::HttpState;

/// The deck's history, oldest first: position 1 is the create event.
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 200, body = Vec<DeckVersionDto>),
        (status = 403), (status = 404, description = "No such deck, or hidden from the caller"),
    )
)]
#[get("/games/{game}/decks/{id}/versions")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn deck_versions(
    state: web::Data<HttpState>,
    DeckAccess {
        principal,
        game,
        deck,
        ..
    }: DeckAccess<ReadDecks>,
) -> Result<HttpResponse, ApiError> {
    let versions = state
        .services
        .decks
        .versions(&principal, &game, deck)
        .await?;
    Ok(HttpResponse::Ok().json(
        versions
            .iter()
            .map(DeckVersionDto::from)
            .collect::<Vec<_>>(),
    ))
}
