//! The caller's like of a deck or a sideboard guide: `PUT` likes, `DELETE` withdraws the like.
//! One toggle for both kinds of item: the four routes differ only in the path they read and
//! the service they call ([`Likeable`]).

use actix_web::{HttpResponse, delete, put, web};
use deckhand_domain::Services;
use deckhand_domain::catalog::Game;
use deckhand_domain::identity::Principal;
use deckhand_domain::likes::LikeError;
use utoipa::IntoResponses;

use crate::access::{DeckPath, GuidePath, PathAccess, WriteDecks, WriteSideboards};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// A path that names an item a user can like, and the service call that likes it.
trait Likeable {
    async fn set_like(
        &self,
        services: &Services,
        principal: &Principal,
        game: &Game,
        liked: bool,
    ) -> Result<(), LikeError>;
}

impl Likeable for DeckPath {
    async fn set_like(
        &self,
        services: &Services,
        principal: &Principal,
        game: &Game,
        liked: bool,
    ) -> Result<(), LikeError> {
        services
            .decks
            .set_like(principal, game, self.id, liked)
            .await
    }
}

impl Likeable for GuidePath {
    async fn set_like(
        &self,
        services: &Services,
        principal: &Principal,
        game: &Game,
        liked: bool,
    ) -> Result<(), LikeError> {
        services
            .sideboard_guides
            .set_like(principal, game, self.id, liked)
            .await
    }
}

/// Records or withdraws the caller's like of the item `access` names: 204 either way.
async fn set_like<R, P: Likeable>(
    state: &HttpState,
    access: PathAccess<R, P>,
    liked: bool,
) -> Result<HttpResponse, ApiError> {
    access
        .path
        .set_like(&state.services, &access.principal, &access.game, liked)
        .await?;
    Ok(HttpResponse::NoContent().finish())
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
    #[response(
        status = 403,
        description = "The write scope is missing: `decks:write` for a deck, `sideboards:write` for a guide"
    )]
    MissingScope(ErrorEnvelope),
    #[response(status = 404, description = "No such item, or hidden from the caller")]
    Hidden(ErrorEnvelope),
}

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

/// Withdraw the caller's like of a deck the caller may see, as the user of the credentials:
/// idempotent per user; `likes` and the `likes` sort follow at once.
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

/// Like a guide the caller may see, as the user of the credentials: idempotent per user;
/// `likes` and the `likes` sort follow at once, `editedAt` does not move.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    responses(
        (status = 204, description = "Liked (again: nothing changes)"),
        LikeFailures,
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["sideboards:write"]),
        ("OAuth2" = ["sideboards:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["sideboards:write"]),
        ("PartnerSignature" = ["sideboards:write"], "PartnerId" = [], "PersonalAccessToken" = ["sideboards:write"])
    )
)]
#[put("/games/{game}/sideboard-guides/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %access.game.slug, guide = %access.path.id))]
pub async fn like_guide(
    state: web::Data<HttpState>,
    access: PathAccess<WriteSideboards, GuidePath>,
) -> Result<HttpResponse, ApiError> {
    set_like(&state, access, true).await
}

/// Withdraw the caller's like of a guide the caller may see, as the user of the credentials:
/// idempotent per user; `likes` and the `likes` sort follow at once, `editedAt` does not move.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    responses(
        (status = 204, description = "Not liked (again: nothing changes)"),
        LikeFailures,
        ServiceFailures,
    ),
    security(
        ("OAuth2" = ["sideboards:write"]),
        ("OAuth2" = ["sideboards:write"], "DPoP" = []),
        ("PersonalAccessToken" = ["sideboards:write"]),
        ("PartnerSignature" = ["sideboards:write"], "PartnerId" = [], "PersonalAccessToken" = ["sideboards:write"])
    )
)]
#[delete("/games/{game}/sideboard-guides/{id}/like")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %access.game.slug, guide = %access.path.id))]
pub async fn unlike_guide(
    state: web::Data<HttpState>,
    access: PathAccess<WriteSideboards, GuidePath>,
) -> Result<HttpResponse, ApiError> {
    set_like(&state, access, false).await
}
