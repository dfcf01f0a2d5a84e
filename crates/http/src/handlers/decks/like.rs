use actix_web::{HttpResponse, put, web};

use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Like a deck the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once.
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 204, description = "Liked (again: nothing changes)"),
        (status = 401, description = "No credentials, or partner-only ones (a like needs a user)", body = ErrorEnvelope),
        (status = 403, description = "`decks:write` is missing", body = ErrorEnvelope),
        (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    )
)]
#[put("/games/{game}/decks/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn like_deck(
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
        .set_like(&principal, &game, deck, true)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
