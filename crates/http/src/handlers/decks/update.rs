use actix_web::{HttpRequest, HttpResponse, patch, web};

use super::{DeckBody, DeckWriteRecord, if_match, write_record};
use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::body::Body;
use crate::error::ApiError;
use crate::state::HttpState;

/// Partial update: owner only. Every save bumps `version` and appends a history record.
#[utoipa::path(
    tag = "decks",
    request_body = DeckBody,
    params(DeckPath, ("If-Match" = Option<String>, Header, description = "The version (ETag) the change is based on")),
    responses(
        (status = 200, body = DeckWriteRecord, headers(("ETag" = String))),
        (status = 400), (status = 401), (status = 403),
        (status = 404, description = "No such deck, or not the caller's"),
        (status = 409), (status = 412, description = "If-Match names another version"), (status = 422),
    ),
    security(("OAuth2" = ["decks:write"]))
)]
#[patch("/games/{game}/decks/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn update_deck(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<WriteDecks, DeckPath>,
    Body(body): Body<DeckBody>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(&request)?;
    let deck = state
        .services
        .decks
        .update(&principal, &game, deck, body.into(), expected)
        .await?;
    Ok(write_record(
        HttpResponse::Ok(),
        &deck,
        principal.acting_user(),
    ))
}
