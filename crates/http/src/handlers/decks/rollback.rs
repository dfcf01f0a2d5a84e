use actix_web::{HttpRequest, HttpResponse, post, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::{DeckWriteRecord, if_match, write_record};
use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::body::Body;
use crate::dto::envelope::{ErrorEnvelope, IdempotencyFailures, ServiceFailures};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"version_number": 1}))]
pub struct RollbackBody {
    /// 1-based position in the versions list.
    #[schema(minimum = 1)]
    version_number: i64,
}

/// Restore the content of an earlier version as a new version (owner only).
#[utoipa::path(
    tag = "decks",
    request_body = RollbackBody,
    params(DeckPath, IdempotencyKeyHeader, ("If-Match" = Option<String>, Header, description = "The version (ETag) the rollback is based on")),
    responses(
        (status = 200, body = DeckWriteRecord, headers(("ETag" = String), ("Idempotent-Replayed" = String, description = "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`"))),
        (status = 400, description = "`Idempotency-Key` is not 1 to 255 printable ASCII characters; or `version_number` is not an integer", body = ErrorEnvelope),
        (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope),
        (status = 404, description = "No such deck, not the caller's, or no such version", body = ErrorEnvelope),
        (status = 412, body = ErrorEnvelope),
        ServiceFailures,
        IdempotencyFailures,
    ),
    security(("OAuth2" = ["decks:write"]))
)]
#[post(
    "/games/{game}/decks/{id}/rollback",
    wrap = "actix_web::middleware::from_fn(crate::idempotency::idempotent)"
)]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn rollback_deck(
    request: HttpRequest,
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<WriteDecks, DeckPath>,
    Body(body): Body<RollbackBody>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(&request)?;
    // A number no version can have is simply out of range.
    let number = i32::try_from(body.version_number).map_err(|_| ApiError::not_found())?;
    let deck = state
        .services
        .decks
        .rollback(&principal, &game, deck, number, expected)
        .await?;
    Ok(write_record(
        HttpResponse::Ok(),
        &deck,
        principal.acting_user(),
    ))
}
