use actix_web::{HttpResponse, post, web};
use deckhand_domain::decks::ForkRequest;
use serde::Deserialize;
use utoipa::ToSchema;

use super::{DeckWriteRecord, write_record};
use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::body::Body;
use crate::created::created;
use crate::dto::envelope::{ErrorEnvelope, IdempotencyFailures, ServiceFailures};
use crate::error::ApiError;
use crate::idempotency::IdempotencyKeyHeader;
use crate::state::HttpState;

/// The body of a fork; every field is optional (`{}` forks the current version as it is).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Stompy, my take", "version": 3}))]
pub struct ForkBody {
    /// 1 to 255 characters; the source's name by default.
    #[schema(min_length = 1, max_length = 255)]
    name: Option<String>,
    /// Exactly one of `public`, `unlisted`, `private` (default `private`).
    #[schema(value_type = Option<Vec<crate::dto::names::VisibilityName>>, min_items = 1, max_items = 1)]
    visibility: Option<Vec<String>>,
    /// The source's version to copy (1-based); its current one by default.
    #[schema(minimum = 1)]
    version: Option<i64>,
}

/// Fork a deck the caller can read into a new deck of the caller's user: the source's name
/// (unless given), notes, format, archetype, legal, youtube_url, thumbnail, cards and featured
/// cards at its current version or `version`; counters start at zero, `source_provider` is
/// `manual`, the fork is not archived and private unless `visibility` says otherwise. The
/// fork's `forked_from` and its first history record name the source and version, and the
/// source's `forks` counts it.
#[utoipa::path(
    tag = "decks",
    params(DeckPath, IdempotencyKeyHeader),
    request_body = ForkBody,
    responses(
        (status = 201, body = DeckWriteRecord, headers(
            ("ETag" = String, description = "`\"1\"`"),
            ("Location" = String, description = "The new fork's URL"),
            ("Idempotent-Replayed" = String, description = "`true` when this is the stored response of an earlier request with the same `Idempotency-Key`"),
        ), example = json!({
            "id": "01a1fd91-2c3d-7e4f-8a9b-0c1d2e3f4a5b", "name": "Stompy, my take", "notes": "",
            "visibility": ["private"], "format": null, "youtube_url": null, "thumbnail": null,
            "legal": true, "archetype": "Aggro", "is_archived": false, "likes": 0, "pageviews": 0,
            "version": 1, "source_provider": "manual", "source_external_id": null,
            "source_external_version": null, "source_external_url": null, "source_imported_at": null,
            "forked_from": {"deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "version": 3},
            "forks": 0,
            "created_at": "2026-11-26T10:12:40.310021Z", "updated_at": "2026-11-26T10:12:40.310021Z"
        })),
        (status = 400, description = "`name` or `visibility` is invalid (`details.fields`), `version` is not an integer, or `Idempotency-Key` is not 1 to 255 printable ASCII characters", body = ErrorEnvelope),
        (status = 401, description = "No credentials, or credentials without a user (a partner acting alone)", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "No such deck, hidden from the caller, or no such version", body = ErrorEnvelope),
        ServiceFailures,
        IdempotencyFailures,
    ),
    security(
        ("OAuth2" = ["decks:write"]),
        ("OAuth2" = ["decks:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["decks:write"]),
        ("PartnerSignature" = ["decks:write"], "PartnerId" = [], "PersonalAccessToken" = ["decks:write"])
    )
)]
#[post(
    "/games/{game}/decks/{id}/fork",
    wrap = "actix_web::middleware::from_fn(crate::idempotency::idempotent)"
)]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn fork_deck(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<WriteDecks, DeckPath>,
    Body(body): Body<ForkBody>,
) -> Result<HttpResponse, ApiError> {
    // A number no version can have is simply out of range.
    let version = body
        .version
        .map(|number| i32::try_from(number).unwrap_or(0));
    let request = ForkRequest {
        name: body.name,
        visibility: body.visibility,
        version,
    };
    let fork = state
        .services
        .decks
        .fork(&principal, &game, deck, request)
        .await?;
    Ok(write_record(
        created(
            &state,
            &format!("/games/{}/decks/{}", game.slug, fork.facts.id.0),
        ),
        &fork,
        principal.acting_user(),
    ))
}
