//! Catalog shapes shared by games and decks.

use deckhand_domain::catalog::Format;
use serde::Serialize;
use utoipa::ToSchema;

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
