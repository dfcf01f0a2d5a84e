use actix_web::{HttpResponse, delete, web};

use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Withdraw the caller's like of a deck the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once.
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 204, description = "Not liked (again: nothing changes)"),
        (status = 401, description = "No credentials, or partner-only ones (a like needs a user)", body = ErrorEnvelope),
        (status = 403, description = "`decks:write` is missing", body = ErrorEnvelope),
        (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    )
)]
#[delete("/games/{game}/decks/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn unlike_deck(
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
        .set_like(&principal, &game, deck, false)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
