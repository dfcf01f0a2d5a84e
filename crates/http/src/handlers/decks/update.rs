use actix_web::{HttpRequest, HttpResponse, patch, web};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Scope};
use uuid::Uuid;

use super::{DeckBody, DeckWriteRecord, etag, if_match};
use crate::auth::Caller;
use crate::body::Body;
use crate::error::ApiError;
use crate::handlers::games::authorized_game;
use crate::state::HttpState;

/// Partial update: owner only. Every save bumps `version` and appends a history record.
#[utoipa::path(
    tag = "decks",
    request_body = DeckBody,
    params(("If-Match" = Option<String>, Header, description = "The version (ETag) the change is based on")),
    responses(
        (status = 200, body = DeckWriteRecord, headers(("ETag" = String))),
        (status = 400), (status = 401), (status = 403),
        (status = 404, description = "No such deck, or not the caller's"),
        (status = 409), (status = 412, description = "If-Match names another version"), (status = 422),
    )
)]
#[patch("/games/{game}/decks/{id}")]
pub async fn update_deck(
    request: HttpRequest,
    state: web::Data<HttpState>,
    Caller(principal): Caller,
    path: web::Path<(String, Uuid)>,
    Body(body): Body<DeckBody>,
) -> Result<HttpResponse, ApiError> {
    let (game, id) = path.into_inner();
    let game = authorized_game(
        &state,
        &principal,
        &game,
        AccessRule::Authenticated(Scope::DecksWrite),
    )
    .await?;
    let expected = if_match(&request)?;
    let deck = state
        .services
        .decks
        .update(&principal, &game, DeckId(id), body.into(), expected)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(&deck))
        .json(DeckWriteRecord::from(&deck)))
}
