use actix_web::{HttpResponse, get, web};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Scope};
use uuid::Uuid;

use super::DeckVersionDto;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

/// The deck's history, oldest first: position 1 is the create event.
#[utoipa::path(
    tag = "decks",
    responses(
        (status = 200, body = Vec<DeckVersionDto>),
        (status = 403), (status = 404, description = "No such deck, or hidden from the caller"),
    )
)]
#[get("/games/{game}/decks/{id}/versions")]
pub async fn deck_versions(
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    path: web::Path<(String, Uuid)>,
) -> Result<HttpResponse, ApiError> {
    let (game, id) = path.into_inner();
    let game = authorized_game(
        &state,
        &principal,
        &game,
        AccessRule::AnonymousOr(Scope::DecksRead),
    )
    .await?;
    let versions = state
        .services
        .decks
        .versions(&principal, &game, DeckId(id))
        .await?;
    Ok(HttpResponse::Ok().json(
        versions
            .iter()
            .map(DeckVersionDto::from)
            .collect::<Vec<_>>(),
    ))
}
