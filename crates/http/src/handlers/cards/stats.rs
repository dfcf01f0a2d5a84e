use actix_web::{HttpResponse, get, web};
use deckhand_domain::decks::card_search::{CardStats, PlayedWith};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::access::{CardPath, PathAccess, ReadDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::dto::games::FormatDto;
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CardStatsParams {
    /// A format of the game, by slug or id: only its decks count. Without it, every public deck
    /// of the game counts.
    format: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StatsCardDto {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    name: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PlayedWithDto {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    name: String,
    /// Decks holding both cards.
    decks: u64,
    /// `decks` over the decks holding the card the statistics are of.
    share: f64,
}

impl From<PlayedWith> for PlayedWithDto {
    fn from(card: PlayedWith) -> Self {
        Self {
            card_id: card.card_id,
            name: card.name,
            decks: card.decks,
            share: card.share,
        }
    }
}

/// How often a card is played, and with what, among the public, non-archived decks of the game
/// (of one format when asked). The figures may lag writes by up to 60 s; `as_of` says when they
/// were computed.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "card": {"cardId": "4457ed35-7c10-48c8-9776-456485fdf070", "name": "Lightning Bolt"},
    "format": {"id": "59b2f751-ebfb-5171-bef0-554ccfd0df1b", "slug": "modern", "name": "Modern"},
    "decks": 1250, "share": 0.31, "average_copies": 3.6,
    "played_with": [{"cardId": "e2d3a0d4-3f9a-4a4c-a3c0-3c7f0a7b5a1e", "name": "Lava Spike",
        "decks": 900, "share": 0.72}],
    "as_of": "2026-11-28T12:00:00Z"
}))]
pub struct CardStatsDto {
    card: StatsCardDto,
    /// The format asked for, or `null` (every public deck of the game).
    format: Option<FormatDto>,
    /// Public, non-archived decks (of the format) holding the card in a counted section.
    decks: u64,
    /// `decks` over all public, non-archived decks (of the format), 0 to 1.
    share: f64,
    /// Copies per deck holding the card, across its counted sections.
    average_copies: f64,
    /// The 20 cards most often in the same decks, basic lands left out, ties by name.
    played_with: Vec<PlayedWithDto>,
    #[serde(with = "time::serde::rfc3339")]
    as_of: OffsetDateTime,
}

impl From<CardStats> for CardStatsDto {
    fn from(stats: CardStats) -> Self {
        Self {
            card: StatsCardDto {
                card_id: stats.card_id,
                name: stats.name,
            },
            format: stats.format.as_ref().map(FormatDto::from),
            decks: stats.decks,
            share: stats.share,
            average_copies: stats.average_copies,
            played_with: stats.played_with.into_iter().map(Into::into).collect(),
            as_of: stats.as_of,
        }
    }
}

/// The statistics of a card: how many public decks play it, its share of them, the copies they
/// play, and the cards most often played with it. Served by the primary: a request may gather
/// the figures into the shared table (docs/adr/0003-card-search-and-stats.md).
#[utoipa::path(
    tag = "cards",
    params(CardPath, CardStatsParams),
    responses(
        (status = 200, body = CardStatsDto),
        (status = 400, description = "An unknown format", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Unknown game or card, or a malformed card id", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/cards/{card_id}/stats")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn card_stats(
    state: web::Data<HttpState>,
    PathAccess {
        game,
        database,
        path,
        ..
    }: PathAccess<ReadDecks, CardPath>,
    query: crate::query::Query<CardStatsParams>,
) -> Result<HttpResponse, ApiError> {
    let stats = state
        .services_on(database)
        .decks
        .card_stats(&game, path.card_id, query.format.as_deref())
        .await?;
    Ok(HttpResponse::Ok().json(CardStatsDto::from(stats)))
}
