use actix_web::{HttpResponse, delete, web};

use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::error::ApiError;
use crate::state::HttpState;

/// Delete the deck's strategy guide (owner only).
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401), (status = 403),
        (status = 404, description = "No guide, no such deck, or not the caller's"),
    ),
    security(("OAuth2" = ["decks:write"]))
)]
#[delete("/games/{game}/decks/{id}/guide")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn delete_guide(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<WriteDecks, DeckPath>,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .decks
        .delete_guide(&principal, &game, deck)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
