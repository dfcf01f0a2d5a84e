use actix_web::{HttpResponse, get, web};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Scope};
use uuid::Uuid;

use super::GuideDto;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

/// The deck's strategy guide, or JSON `null` when it has none. A premium guide is cut to a
/// 200-character preview (`is_truncated`) for callers other than the owner and premium users.
#[utoipa::path(
    tag = "decks",
    responses(
        (status = 200, body = Option<GuideDto>),
        (status = 403), (status = 404, description = "No such deck, or hidden from the caller"),
    )
)]
#[get("/games/{game}/decks/{id}/guide")]
pub async fn read_guide(
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
    let guide = state
        .services
        .decks
        .guide(&principal, &game, DeckId(id))
        .await?;
    Ok(HttpResponse::Ok().json(guide.map(GuideDto::from)))
}
