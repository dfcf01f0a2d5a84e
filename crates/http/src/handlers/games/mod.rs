//! Games and their formats (extension): open to every caller.

pub(crate) mod formats;
pub(crate) mod list;

use deckhand_domain::catalog::Game;
use serde::Serialize;
use utoipa::ToSchema;

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
