use actix_web::{HttpResponse, post, web};

use super::{DeckBody, DeckWriteRecord, write_record};
use crate::access::{GamePath, PathAccess, WriteDecks};
use crate::body::Body;
use crate::created::created;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

/// Create a deck owned by the caller (a partner-only caller: its `created_by` user).
#[utoipa::path(
    tag = "decks",
    params(GamePath, IdempotencyKeyHeader),
    request_body(content = DeckBody, example = json!({
        "name": "Mono-Green Stompy", "visibility": ["public"], "legal": true,
        "cards": [
            {"section": "mainboard", "quantity": 4, "name": "Siege Wurm"},
            {"section": "mainboard", "quantity": 16, "name": "Forest", "set": "m19"},
            {"section": "sideboard", "quantity": 2, "name": "Plummet"}]
    })),
    responses(
        (status = 201, body = DeckWriteRecord, headers(
            ("ETag" = String, description = "`\"1\"`"),
            ("Location" = String, description = "The new deck's URL"),
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`"),
        )),
        (status = 400, description = "A field is invalid (`details.fields`), or `Idempotency-Key` is not 1 to 255 printable ASCII characters", body = ErrorEnvelope,
            example = json!({"error": "SERVICE_VALIDATION_ERROR", "message": "name: must be 1 to 255 characters",
                "details": {"fields": [{"field": "name", "code": "length", "message": "must be 1 to 255 characters"}]}})),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Unknown game", body = ErrorEnvelope),
        (status = 409, description = "The provenance triple is taken (`details.fields[0].code` `duplicate`), or the first request with this `Idempotency-Key` is still running (`details.reason` `in_progress`)", body = ErrorEnvelope,
            examples(
                ("duplicate" = (value = json!({"error": "SERVICE_VALIDATION_ERROR", "message": "the owner already has a deck with this provenance",
                    "details": {"fields": [{"field": "source_external_id", "code": "duplicate", "message": "already imported"}]}}))),
                ("in_progress" = (value = json!({"error": "SERVICE_VALIDATION_ERROR",
                    "message": "a request with this Idempotency-Key is still being processed; retry shortly",
                    "details": {"reason": "in_progress", "header": "Idempotency-Key"}}))),
            )),
        (status = 422, description = "Cards could not be resolved (`details.unresolved`), or this `Idempotency-Key` was used for another request", body = ErrorEnvelope,
            examples(
                ("unresolved" = (value = json!({"error": "SERVICE_CARD_RESOLUTION_FAILED", "message": "1 card identifier(s) could not be resolved",
                    "details": {"field": "cards", "unresolved": [{"index": 0, "input": {"name": "Lightnig Bolt"}, "reason": "not_found"}]}}))),
                ("key_reused" = (value = json!({"error": "SERVICE_VALIDATION_ERROR",
                    "message": "this Idempotency-Key was used for another request; use a new key",
                    "details": {"reason": "key_reused", "fields": [{"field": "Idempotency-Key", "code": "reused", "message": "was used with another method, path or body"}]}}))),
            )),
        ServiceFailures,
    ),
    security(("OAuth2" = ["decks:write"]))
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
    Ok(write_record(
        created(
            &state,
            &format!("/games/{}/decks/{}", game.slug, deck.facts.id.0),
        ),
        &deck,
        principal.acting_user(),
    ))
}
