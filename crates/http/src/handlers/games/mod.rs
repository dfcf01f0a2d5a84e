//! Games and their formats (extension): open to every caller.

pub mod formats;
pub mod list;

use deckhand_domain::catalog::{Format, Game, GameNotFound};
use deckhand_domain::identity::{AccessRule, Principal};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::state::HttpState;

/// The game of a `{game}` path segment, or 404 `SERVICE_NOT_FOUND`: every game-scoped
/// endpoint starts here.
pub async fn require_game(state: &HttpState, slug: &str) -> Result<Game, ApiError> {
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

/// The game of a `{game}` path segment once the caller passed `rule` for it: unknown games are
/// 404 before any credential or scope is judged, so every game-scoped endpoint answers alike.
pub async fn authorized_game(
    state: &HttpState,
    principal: &Principal,
    slug: &str,
    rule: AccessRule,
) -> Result<Game, ApiError> {
    let game = require_game(state, slug).await?;
    principal.authorize(rule, Some(&game.slug))?;
    Ok(game)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct GameDto {
    slug: String,
    name: String,
    /// Deck sections in the game's order.
    sections: Vec<SectionDto>,
    /// The game's colours in display order.
    colors: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SectionDto {
    key: String,
    label: String,
    /// Whether the section's cards count towards the deck (a maybeboard does not).
    counted: bool,
}

impl From<Game> for GameDto {
    fn from(game: Game) -> Self {
        Self {
            slug: game.slug,
            name: game.name,
            sections: game
                .sections
                .into_iter()
                .map(|section| SectionDto {
                    key: section.key,
                    label: section.label,
                    counted: section.counted,
                })
                .collect(),
            colors: game.colors,
        }
    }
}

/// A format, as listed and as decks carry it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FormatDto {
    /// Stable across installs: UUID v5 of `<game>/<slug>`.
    pub id: uuid::Uuid,
    pub slug: String,
    pub name: String,
}

impl From<Format> for FormatDto {
    fn from(format: Format) -> Self {
        Self {
            id: format.id,
            slug: format.slug,
            name: format.name,
        }
    }
}
