//! The caller's like of a deck: `PUT` likes, `DELETE` withdraws the like; one toggle.

use actix_web::{HttpResponse, delete, put, web};
use utoipa::IntoResponses;

use crate::access::{DeckPath, PathAccess, WriteDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// Like a deck the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once.
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 204, description = "Liked (again: nothing changes)"),
        LikeFailures,
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["decks:write"]),
        ("OAuth2" = ["decks:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["decks:write"]),
        ("PartnerSignature" = ["decks:write"], "PartnerId" = [], "PersonalAccessToken" = ["decks:write"])
    )
)]
#[put("/games/{game}/decks/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %access.game.slug, deck = %access.path.id.0))]
pub async fn like_deck(
    state: web::Data<HttpState>,
    access: PathAccess<WriteDecks, DeckPath>,
) -> Result<HttpResponse, ApiError> {
    set_like(&state, access, true).await
}

/// Withdraw the caller's like of a deck the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once.
#[utoipa::path(
    tag = "decks",
    params(DeckPath),
    responses(
        (status = 204, description = "Not liked (again: nothing changes)"),
        LikeFailures,
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["decks:write"]),
        ("OAuth2" = ["decks:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["decks:write"]),
        ("PartnerSignature" = ["decks:write"], "PartnerId" = [], "PersonalAccessToken" = ["decks:write"])
    )
)]
#[delete("/games/{game}/decks/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %access.game.slug, deck = %access.path.id.0))]
pub async fn unlike_deck(
    state: web::Data<HttpState>,
    access: PathAccess<WriteDecks, DeckPath>,
) -> Result<HttpResponse, ApiError> {
    set_like(&state, access, false).await
}

/// What a like and its withdrawal may fail with.
#[derive(IntoResponses)]
#[allow(
    dead_code,
    reason = "a description for the OpenAPI document, never built"
)]
enum LikeFailures {
    #[response(
        status = 401,
        description = "No credentials, or partner-only ones (a like needs a user)"
    )]
    NoUser(ErrorEnvelope),
    #[response(status = 403, description = "`decks:write` is missing")]
    MissingScope(ErrorEnvelope),
    #[response(status = 404, description = "No such deck, or hidden from the caller")]
    Hidden(ErrorEnvelope),
}

async fn set_like(
    state: &HttpState,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteDecks, DeckPath>,
    liked: bool,
) -> Result<HttpResponse, ApiError> {
    state
        .services
        .decks
        .set_like(&principal, &game, path.id, liked)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
