//! What a game-scoped request may reach. Every endpoint under `/games/{game}` answers in the
//! same order: a malformed id in the path is 404, an unknown game is 404, and only then is the
//! caller judged against the endpoint's access rule (401 or 403). The extractors here are that
//! order, so a handler starts with what it may use.

use std::marker::PhantomData;

use actix_web::dev::Payload;
use actix_web::{Error, FromRequest, HttpRequest, web};
use deckhand_domain::catalog::{Game, GameNotFound};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Principal, Scope};
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use crate::auth::authenticate;
use crate::error::ApiError;
use crate::state::HttpState;

/// The access rule of an endpoint, as a type so that extractors can carry it.
pub(crate) trait Rule {
    const RULE: AccessRule;
}

/// Reads of decks and cards: anonymous callers pass (and see public decks only); others need
/// `decks:read`.
pub(crate) enum ReadDecks {}

impl Rule for ReadDecks {
    const RULE: AccessRule = AccessRule::AnonymousOr(Scope::DecksRead);
}

/// Deck writes: an authenticated caller with `decks:write`.
pub(crate) enum WriteDecks {}

impl Rule for WriteDecks {
    const RULE: AccessRule = AccessRule::Authenticated(Scope::DecksWrite);
}

/// The path of a game-scoped endpoint.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct GamePath {
    /// Game slug.
    game: String,
}

/// The path of a deck endpoint.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct DeckPath {
    /// Game slug.
    game: String,
    /// Deck id.
    id: Uuid,
}

/// The game of the `{game}` path segment, once the caller passed `R`'s rule for it.
pub(crate) struct GameAccess<R> {
    pub(crate) principal: Principal,
    pub(crate) game: Game,
    rule: PhantomData<fn() -> R>,
}

/// The deck of the `{id}` path segment in an authorized game. Whether the caller may see or
/// write that deck is the deck service's to judge.
pub(crate) struct DeckAccess<R> {
    pub(crate) principal: Principal,
    pub(crate) game: Game,
    pub(crate) deck: DeckId,
    rule: PhantomData<fn() -> R>,
}

impl<R: Rule> FromRequest for GameAccess<R> {
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self, Error>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            let path = web::Path::<GamePath>::extract(&request).await?;
            let (principal, game) = authorized_game(&request, &path.game, R::RULE).await?;
            Ok(Self {
                principal,
                game,
                rule: PhantomData,
            })
        })
    }
}

impl<R: Rule> FromRequest for DeckAccess<R> {
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self, Error>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            // A malformed id is 404 through the path extractor's error handler.
            let path = web::Path::<DeckPath>::extract(&request).await?;
            let (principal, game) = authorized_game(&request, &path.game, R::RULE).await?;
            Ok(Self {
                principal,
                game,
                deck: DeckId(path.id),
                rule: PhantomData,
            })
        })
    }
}

async fn authorized_game(
    request: &HttpRequest,
    slug: &str,
    rule: AccessRule,
) -> Result<(Principal, Game), ApiError> {
    let state = request
        .app_data::<web::Data<HttpState>>()
        .ok_or_else(|| ApiError::unexpected(anyhow::anyhow!("HttpState is not registered")))?;
    let game = known_game(state, slug).await?;
    let principal = authenticate(request, state).await?.0;
    principal.authorize(rule, Some(&game.slug))?;
    Ok((principal, game))
}

/// The game of a `{game}` path segment, or 404 `SERVICE_NOT_FOUND`, for endpoints open to
/// every caller.
pub(crate) async fn known_game(state: &HttpState, slug: &str) -> Result<Game, ApiError> {
    state
        .services
        .catalog
        .game(slug)
        .await
        .map_err(|error| match error {
            GameNotFound::NotFound => ApiError::not_found(),
            GameNotFound::Unexpected(error) => ApiError::unexpected(error),
        })
}
