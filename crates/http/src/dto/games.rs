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

/// A format as the formats list shows it: with its deck rules.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "59b2f751-ebfb-5171-bef0-554ccfd0df1b", "slug": "modern", "name": "Modern",
    "rules": {"main_min": 60, "main_max": null, "sideboard_max": 15, "copy_limit": 4,
        "singleton": false, "commander": null}
}))]
pub struct FormatListItem {
    #[serde(flatten)]
    format: FormatDto,
    /// `null` for a format without rules (a check of it answers 400).
    rules: Option<super::formats::FormatRulesDto>,
}

impl From<Format> for FormatListItem {
    fn from(mut format: Format) -> Self {
        let rules = format.rules.take().map(Into::into);
        Self {
            format: format.into(),
            rules,
        }
    }
}
