//! What a game-scoped request may reach. Every endpoint under `/games/{game}` answers in the
//! same order: a malformed id in the path is 404, an unknown game is 404, and only then is the
//! caller judged against the endpoint's access rule (401 or 403). The extractors here are that
//! order, so a handler starts with what it may use.

use std::marker::PhantomData;
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{Error, FromRequest, HttpRequest, web};
use deckhand_domain::Services;
use deckhand_domain::catalog::{Game, GameNotFound};
use deckhand_domain::decks::DeckId;
use deckhand_domain::identity::{AccessRule, Principal, Scope};
use deckhand_domain::routing::Database;
use deckhand_domain::sideboards::{GuideId, MatchupId};
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use utoipa::IntoParams;

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

/// Sideboard guide reads: an authenticated caller with `sideboards:read` (anonymous: 401).
pub(crate) enum ReadSideboards {}

impl Rule for ReadSideboards {
    const RULE: AccessRule = AccessRule::Authenticated(Scope::SideboardsRead);
}

/// Sideboard guide writes (guides, their decks and matchups): `sideboards:write`.
pub(crate) enum WriteSideboards {}

impl Rule for WriteSideboards {
    const RULE: AccessRule = AccessRule::Authenticated(Scope::SideboardsWrite);
}

/// A user's own collection (list, export): `collection:read`, with a user identity.
pub(crate) enum ReadCollection {}

impl Rule for ReadCollection {
    const RULE: AccessRule = AccessRule::UserWith(&[Scope::CollectionRead]);
}

/// Collection writes (PATCH, import): `collection:write`, with a user identity.
pub(crate) enum WriteCollection {}

impl Rule for WriteCollection {
    const RULE: AccessRule = AccessRule::UserWith(&[Scope::CollectionWrite]);
}

/// What a deck needs from the caller's collection: `decks:read` and `collection:read`.
pub(crate) enum DeckNeeds {}

impl Rule for DeckNeeds {
    const RULE: AccessRule = AccessRule::UserWith(&[Scope::CollectionRead, Scope::DecksRead]);
}

/// The events feed: any authenticated caller; its scopes decide which events it sees.
pub(crate) enum ReadEvents {}

impl Rule for ReadEvents {
    const RULE: AccessRule = AccessRule::SignedIn;
}

/// Which database may answer an endpoint (see `deckhand_domain::routing`): the primary, the
/// default, or, for reads the contract lets a replica serve, whichever the router picks.
pub(crate) trait Destination {
    const REPLICA_MAY_SERVE: bool;
}

/// Writes, credential checks and the reads a replica may not serve.
pub(crate) enum OnPrimary {}

impl Destination for OnPrimary {
    const REPLICA_MAY_SERVE: bool = false;
}

/// Lists, details, versions, guides, export, resolution and the events feed: a replica may
/// serve them to a caller without a user identity.
pub(crate) enum ReplicaMayServe {}

impl Destination for ReplicaMayServe {
    const REPLICA_MAY_SERVE: bool = true;
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
    #[param(value_type = Uuid)]
    pub(crate) id: DeckId,
}

/// A game-scoped path with ids besides `{game}` (every id a UUID, so a malformed one is 404).
pub(crate) trait ScopedPath: DeserializeOwned + 'static {
    fn game(&self) -> &str;
}

/// The path of a card endpoint.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct CardPath {
    /// Game slug.
    game: String,
    /// Card id (`cardId`: any printing of the card).
    pub(crate) card_id: uuid::Uuid,
}

impl ScopedPath for CardPath {
    fn game(&self) -> &str {
        &self.game
    }
}

/// The path of a sideboard guide endpoint.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct GuidePath {
    /// Game slug.
    game: String,
    /// Sideboard guide id.
    #[param(value_type = Uuid)]
    pub(crate) id: GuideId,
}

/// The path of an attached deck of a guide.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct GuideDeckPath {
    /// Game slug.
    game: String,
    /// Sideboard guide id.
    #[param(value_type = Uuid)]
    pub(crate) id: GuideId,
    /// Attached deck id.
    #[param(value_type = Uuid)]
    pub(crate) deck_id: DeckId,
}

/// The path of a comparison of two decks.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct ComparePath {
    /// Game slug.
    game: String,
    /// The deck to compare from.
    #[param(value_type = Uuid)]
    pub(crate) id: DeckId,
    /// The deck to compare to.
    #[param(value_type = Uuid)]
    pub(crate) other_id: DeckId,
}

/// The path of a matchup of a guide.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct MatchupPath {
    /// Game slug.
    game: String,
    /// Sideboard guide id.
    #[param(value_type = Uuid)]
    pub(crate) id: GuideId,
    /// Matchup id.
    #[param(value_type = Uuid)]
    pub(crate) matchup_id: MatchupId,
}

impl ScopedPath for GamePath {
    fn game(&self) -> &str {
        &self.game
    }
}

impl ScopedPath for DeckPath {
    fn game(&self) -> &str {
        &self.game
    }
}

impl ScopedPath for ComparePath {
    fn game(&self) -> &str {
        &self.game
    }
}

impl ScopedPath for GuidePath {
    fn game(&self) -> &str {
        &self.game
    }
}

impl ScopedPath for GuideDeckPath {
    fn game(&self) -> &str {
        &self.game
    }
}

impl ScopedPath for MatchupPath {
    fn game(&self) -> &str {
        &self.game
    }
}

/// The ids of a path `P` in an authorized game, once the caller passed `R`'s rule for it, and
/// the database that answers (`D` says whether a replica may). Whether the caller may see or
/// write what they name is the service's to judge.
pub(crate) struct PathAccess<R, P, D = OnPrimary> {
    pub(crate) principal: Principal,
    pub(crate) game: Arc<Game>,
    pub(crate) path: P,
    /// The database whose services the handler calls ([`HttpState::services_on`]).
    pub(crate) database: Database,
    rule: PhantomData<fn() -> (R, D)>,
}

impl<R: Rule, P: ScopedPath, D: Destination> FromRequest for PathAccess<R, P, D> {
    type Error = Error;
    type Future = LocalBoxFuture<'static, Result<Self, Error>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            // A malformed id is 404 through the path extractor's error handler.
            let path = web::Path::<P>::extract(&request).await?.into_inner();
            let (principal, game, database) =
                authorized_game(&request, path.game(), R::RULE, D::REPLICA_MAY_SERVE).await?;
            Ok(Self {
                principal,
                game,
                path,
                database,
                rule: PhantomData,
            })
        })
    }
}

async fn authorized_game(
    request: &HttpRequest,
    slug: &str,
    rule: AccessRule,
    replica_may_serve: bool,
) -> Result<(Principal, Arc<Game>, Database), ApiError> {
    let state = request
        .app_data::<web::Data<HttpState>>()
        .ok_or_else(|| ApiError::unexpected(anyhow::anyhow!("HttpState is not registered")))?;
    // The caller decides the database, the game is looked up there, and only then do failed
    // credentials count: an unknown game is a 404 whoever asks.
    let caller = authenticate(request, state).await;
    let database = match &caller {
        Ok(caller) if replica_may_serve => state.route_read(&caller.0),
        _ => Database::Primary,
    };
    let game = known_game(state.services_on(database), slug).await?;
    let principal = caller?.0;
    principal.authorize(rule, Some(&game.slug))?;
    Ok((principal, game, database))
}

/// The game of a `{game}` path segment, or 404 `SERVICE_NOT_FOUND`, for endpoints open to
/// every caller.
pub(crate) async fn known_game(services: &Services, slug: &str) -> Result<Arc<Game>, ApiError> {
    services
        .catalog
        .game(slug)
        .await
        .map_err(|error| match error {
            GameNotFound::NotFound => ApiError::not_found(),
            GameNotFound::Unexpected(error) => ApiError::unexpected(error),
        })
}
