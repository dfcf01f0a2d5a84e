use actix_web::{HttpResponse, delete, web};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Scope};
use uuid::Uuid;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

/// Delete the deck's strategy guide (owner only).
#[utoipa::path(
    tag = "decks",
    responses(
        (status = 204, description = "Deleted"),
        (status = 401), (status = 403),
        (status = 404, description = "No guide, no such deck, or not the caller's"),
    )
)]
#[delete("/games/{game}/decks/{id}/guide")]
pub async fn delete_guide(
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    path: web::Path<(String, Uuid)>,
) -> Result<HttpResponse, ApiError> {
    let (game, id) = path.into_inner();
    let game = authorized_game(
        &state,
        &principal,
        &game,
        AccessRule::Authenticated(Scope::DecksWrite),
    )
    .await?;
    state
        .services
        .decks
        .delete_guide(&principal, &game, DeckId(id))
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
