use actix_web::{HttpResponse, post, web};
use deckhand_domain::identity::{AccessRule, Scope};

use super::{DeckBody, DeckWriteRecord, etag};
use crate::auth::Caller;
use crate::body::Body;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

/// Create a deck owned by the caller (a partner-only caller: its `created_by` user).
#[utoipa::path(
    tag = "decks",
    request_body = DeckBody,
    responses(
        (status = 201, body = DeckWriteRecord, headers(("ETag" = String))),
        (status = 400, description = "A field is invalid (`details.fields`)"),
        (status = 401), (status = 403),
        (status = 404, description = "Unknown game"),
        (status = 409, description = "The provenance triple is taken"),
        (status = 422, description = "Cards could not be resolved (`details.unresolved`)"),
    )
)]
#[post("/games/{game}/decks")]
pub async fn create_deck(
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    game: web::Path<String>,
    Body(body): Body<DeckBody>,
) -> Result<HttpResponse, ApiError> {
    let game = authorized_game(
        &state,
        &principal,
        &game,
        AccessRule::Authenticated(Scope::DecksWrite),
    )
    .await?;
    let deck = state
        .services
        .decks
        .create(&principal, &game, body.into())
        .await?;
    Ok(HttpResponse::Created()
        .insert_header(etag(&deck))
        .json(DeckWriteRecord::from(&deck)))
}
