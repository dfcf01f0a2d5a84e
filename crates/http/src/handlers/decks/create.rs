use actix_web::http::header::ETag;
use actix_web::{HttpResponse, post, web};

use super::{DeckBody, DeckWriteRecord, etag};
use crate::access::{GamePath, PathAccess, WriteDecks};
use crate::body::Body;
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

/// Create a deck owned by the caller (a partner-only caller: its `created_by` user).
#[utoipa::path(
    tag = "decks",
    params(GamePath, IdempotencyKeyHeader),
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
#[post(
    "/games/{game}/decks",
    wrap = "actix_web::middleware::from_fn(crate::idempotency::idempotent)"
)]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn create_deck(
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<WriteDecks, GamePath>,
    Body(body): Body<DeckBody>,
) -> Result<HttpResponse, ApiError> {
    let deck = state
        .services
        .decks
        .create(&principal, &game, body.into())
        .await?;
    Ok(HttpResponse::Created()
        .insert_header(ETag(etag(&deck)))
        .json(DeckWriteRecord::from(&deck)))
}
