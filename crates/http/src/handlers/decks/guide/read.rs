use actix_web::{HttpResponse, get, web};

use super::GuideDto;
use crate::access::{DeckAccess, DeckPath, ReadDecks};
use crate::error::ApiError;
use crate::state::HttpState;

/// The deck's strategy guide, or JSON `null` when it has none. A premium guide is cut to a
/// 200-character preview (`is_truncated`) for callers other than the owner and premium users.
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 200, body = Option<GuideDto>),
        (status = 403), (status = 404, description = "No such deck, or hidden from the caller"),
    )
)]
#[get("/games/{game}/decks/{id}/guide")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn read_guide(
    state: web::Data<HttpState>,
    DeckAccess {
        principal,
        game,
        deck,
        ..
    }: DeckAccess<ReadDecks>,
) -> Result<HttpResponse, ApiError> {
    let guide = state.services.decks.guide(&principal, &game, deck).await?;
    Ok(HttpResponse::Ok().json(guide.map(GuideDto::from)))
}
