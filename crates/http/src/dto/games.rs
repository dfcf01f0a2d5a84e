//! Catalog shapes shared by games and decks.

use deckhand_domain::catalog::Format;
use deckhand_domain::formats::FormatRules;
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

impl From<&Format> for FormatDto {
    fn from(format: &Format) -> Self {
        Self {
            id: format.id,
            slug: format.slug.clone(),
            name: format.name.clone(),
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
    rules: Option<FormatRulesDto>,
}

impl From<Format> for FormatListItem {
    fn from(mut format: Format) -> Self {
        let rules = format.rules.take().map(Into::into);
        Self {
            format: FormatDto::from(&format),
            rules,
        }
    }
}

/// A format's deck rules.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FormatRulesDto {
    /// The fewest cards of the game's main section: `mainboard` in `mtg`, `deck` in `fab` (0:
    /// the size is `commander.deck_size`).
    main_min: u32,
    main_max: Option<u32>,
    /// The most sideboard cards, a companion included outside commander formats.
    sideboard_max: Option<u32>,
    /// Copies of a card by name across the counted sections.
    copy_limit: u32,
    singleton: bool,
    commander: Option<CommanderRulesDto>,
    /// The most cards of the card pool: every counted section but `hero` (`fab`: deck, arena
    /// and inventory); absent: not checked (as in every `mtg` format, whose rules read as
    /// before).
    #[serde(skip_serializing_if = "Option::is_none")]
    pool_max: Option<u32>,
    /// Exactly one hero in the `hero` section, young or adult; absent: no hero rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    hero: Option<HeroRulesDto>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HeroRulesDto {
    /// A young hero (Blitz) or an adult one (Classic Constructed).
    young: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CommanderRulesDto {
    count_max: u32,
    /// Exact size of the commander and mainboard sections together.
    deck_size: u32,
    color_identity: bool,
}

impl From<FormatRules> for FormatRulesDto {
    fn from(rules: FormatRules) -> Self {
        Self {
            main_min: rules.main_min,
            main_max: rules.main_max,
            sideboard_max: rules.sideboard_max,
            copy_limit: rules.copy_limit,
            singleton: rules.singleton,
            commander: rules.commander.map(|commander| CommanderRulesDto {
                count_max: commander.count_max,
                deck_size: commander.deck_size,
                color_identity: commander.color_identity,
            }),
            pool_max: rules.pool_max,
            hero: rules.hero.map(|hero| HeroRulesDto { young: hero.young }),
        }
    }
}
