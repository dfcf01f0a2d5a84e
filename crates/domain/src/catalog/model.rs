//! Catalog values. Wire names follow the public spec (see `CardIdentifier`).

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A game, as its table row and its sections say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    pub slug: String,
    pub name: String,
    /// In the game's order; every deck section a card may go in.
    pub sections: Vec<Section>,
    /// In the game's display order; card and deck colours are sorted by it.
    pub colors: Vec<String>,
}

impl Game {
    pub fn section(&self, key: &str) -> Option<&Section> {
        self.sections.iter().find(|section| section.key == key)
    }

    /// `colors` without duplicates, in the game's colour order; colours the game does not
    /// know are dropped.
    pub fn order_colors<'a>(&self, colors: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let present: Vec<&str> = colors.into_iter().collect();
        self.colors
            .iter()
            .filter(|color| present.contains(&color.as_str()))
            .cloned()
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub key: String,
    pub label: String,
    /// Whether its cards count towards the deck (colours, totals); maybeboards do not.
    pub counted: bool,
    /// The featured slot this section's cards fill when a deck's owner chose none (`mtg`'s
    /// commander and companion, `fab`'s hero); `None` for the others.
    pub featured_slot: Option<FeaturedSlot>,
}

/// Where a featured card of a deck is shown; a game's sections say which of their cards fill
/// which slot when the owner chose none ([`Section::featured_slot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeaturedSlot {
    Commander,
    Companion,
    Cover,
    /// `fab`'s hero.
    Hero,
}

impl FeaturedSlot {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Commander => "commander",
            Self::Companion => "companion",
            Self::Cover => "cover",
            Self::Hero => "hero",
        }
    }

    /// The slot of [`Self::as_str`]'s name.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Commander, Self::Companion, Self::Cover, Self::Hero]
            .into_iter()
            .find(|slot| slot.as_str() == name)
    }

    pub const fn label(self) -> &'static str {
        match self {
            Self::Commander => "Commander",
            Self::Companion => "Companion",
            Self::Cover => "Cover",
            Self::Hero => "Hero",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// [`format_id`] of the game and slug: the same on every install.
    pub id: Uuid,
    pub slug: String,
    pub name: String,
    /// The deck rules a check applies; `None` for a format without rules (no check).
    pub rules: Option<super::deck_rules::FormatRules>,
}

/// The namespace of format ids (a random v4 UUID chosen once; never change it).
pub const FORMAT_NAMESPACE: Uuid = Uuid::from_u128(0x5d0c2a0e_3b8f_4c1e_9a57_6f1e2d8b4c10);

/// The stable id of a format: UUID v5 of `"<game>/<slug>"` in [`FORMAT_NAMESPACE`].
pub fn format_id(game: &str, slug: &str) -> Uuid {
    Uuid::new_v5(&FORMAT_NAMESPACE, format!("{game}/{slug}").as_bytes())
}

/// How names are compared: trimmed and lower-cased (Unicode-aware), so `lightning BOLT`
/// finds `Lightning Bolt`. Stores index this key instead of relying on a collation.
pub fn name_key(name: &str) -> String {
    name.trim().to_lowercase()
}

/// A card identifier as a partner sends it (the wire form is the HTTP
/// adapter's). Every field is optional; absent fields stay absent when echoed back as `input`.
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct CardIdentifier {
    pub catalog_a_id: Option<String>,
    pub catalog_b_id: Option<String>,
    pub catalog_c_id: Option<String>,
    pub card_id: Option<String>,
    pub variant_id: Option<String>,
    pub name: Option<String>,
    pub set: Option<String>,
    pub collector_number: Option<String>,
    /// With `name`: the pitch, 1 to 3 or its colour (`fab`: `red`, `yellow`, `blue`), naming
    /// the card `<name> (<colour>)`.
    pub pitch: Option<String>,
    /// `fab`'s `cardIdentifier` (`sink-below-red`): the card's `catalog_b_id`.
    pub card_identifier: Option<String>,
    /// A printing identifier (`WTR216`): its set code and number, as `set` + `collector_number`.
    pub print: Option<String>,
    /// Another name of `set`.
    pub set_code: Option<String>,
    /// The TCGplayer product id: the printing's `catalog_a_id`.
    pub tcgplayer_id: Option<String>,
}

/// A printing as callers see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printing {
    pub variant_id: Uuid,
    pub card_id: Uuid,
    /// The card's full name (`Fire // Ice` for a split card).
    pub name: String,
    /// Lower case.
    pub set: String,
    pub collector_number: String,
    pub type_line: String,
    pub image_url: Option<String>,
    /// In the game's colour order.
    pub colors: Vec<String>,
    pub catalog_a_id: Option<String>,
    pub catalog_b_id: Option<String>,
    pub catalog_c_id: Option<String>,
}

impl Printing {
    /// The printing's ids in the three outside catalogs, a, b and c in that order.
    pub fn catalog_ids(&self) -> [Option<&str>; 3] {
        [
            self.catalog_a_id.as_deref(),
            self.catalog_b_id.as_deref(),
            self.catalog_c_id.as_deref(),
        ]
    }
}

/// Which rank a printing has among its card's printings when none is pinned: lower wins, then
/// the newest release. See [`crate::catalog::source`] for how imports assign it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Preference {
    /// English, not a promo: the candidates for a card's default printing.
    Default = 0,
    /// English promos.
    Promo = 1,
    /// Other languages: found by id or set and number, chosen only when nothing else exists.
    OtherLanguage = 2,
}

impl Preference {
    pub fn as_i16(self) -> i16 {
        self as i16
    }

    /// The stored value back; an unknown one is treated as the least preferred.
    pub fn from_i16(value: i16) -> Self {
        match value {
            0 => Self::Default,
            1 => Self::Promo,
            _ => Self::OtherLanguage,
        }
    }
}

/// One printing as the store keeps it: what callers see plus what resolution needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    pub printing: Printing,
    /// Face names of a multi-face card in order (front first); empty for one face.
    pub face_names: Vec<String>,
    pub lang: String,
    pub released_at: Option<time::Date>,
    pub preference: Preference,
    /// Format slug → the source's status (`legal`, `not_legal`, `restricted`, `banned`).
    /// Shared: a card's printings mostly have the same map, so a catalog held in memory keeps
    /// one copy of each (about 3 KB a map, 45,000 printings in the 2019 catalog).
    pub legalities: Arc<BTreeMap<String, String>>,
    /// The card's colour identity, in the game's colour order.
    pub color_identity: Vec<String>,
    /// What the card's rules text says about deck building, when the file carries the text;
    /// `None` keeps what is stored (seeded by a migration for files without it).
    pub text_rules: Option<super::deck_rules::CardTextRules>,
}

impl CatalogEntry {
    /// Legal or restricted in `format` (restricted cards may be played, one copy).
    pub fn is_legal_in(&self, format: &Format) -> bool {
        matches!(
            self.legalities.get(&format.slug).map(String::as_str),
            Some("legal" | "restricted")
        )
    }

    /// The order of preference among a card's printings when none is pinned (lowest first):
    /// the lowest [`Preference`], then the newest release (unknown dates last), then the lowest
    /// variant id.
    pub fn preference_order(&self) -> (Preference, bool, Reverse<Option<time::Date>>, Uuid) {
        (
            self.preference,
            self.released_at.is_none(),
            Reverse(self.released_at),
            self.printing.variant_id,
        )
    }

    /// Whether this printing's legalities speak for its card in a file made on `file_day`:
    /// a printing released after the file was made carries what the file could not know yet
    /// (a card not yet released is `not_legal` everywhere), so an import records no legality
    /// from it. An unknown release date speaks.
    pub fn speaks_for_legality(&self, file_day: time::OffsetDateTime) -> bool {
        self.released_at
            .is_none_or(|released| released <= file_day.date())
    }

    /// The entry that speaks for each card's legalities among `entries` (a batch in file
    /// order) in a file made on `file_day`: the card's last one that
    /// [speaks](Self::speaks_for_legality), in card id order.
    pub fn speaking_for_legality(
        entries: &[CatalogEntry],
        file_day: time::OffsetDateTime,
    ) -> Vec<&CatalogEntry> {
        let mut speaking = BTreeMap::new();
        for entry in entries {
            if entry.speaks_for_legality(file_day) {
                speaking.insert(entry.printing.card_id, entry);
            }
        }
        speaking.into_values().collect()
    }

    /// The front face's name: the first face, or the whole name for a single-face card.
    pub fn front_face_name(&self) -> &str {
        self.face_names
            .first()
            .map_or(self.printing.name.as_str(), String::as_str)
    }
}

/// What the catalog of a game holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CatalogCounts {
    pub cards: u64,
    pub printings: u64,
}

/// Exact keys of printings, one list per identifier kind, for one bounded lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrintingKeys {
    pub variant_ids: Vec<Uuid>,
    pub catalog_a_ids: Vec<String>,
    pub catalog_b_ids: Vec<String>,
    pub catalog_c_ids: Vec<String>,
    /// (set in lower case, collector number).
    pub set_numbers: Vec<(String, String)>,
}

impl PrintingKeys {
    pub fn is_empty(&self) -> bool {
        self.variant_ids.is_empty()
            && self.catalog_a_ids.is_empty()
            && self.catalog_b_ids.is_empty()
            && self.catalog_c_ids.is_empty()
            && self.set_numbers.is_empty()
    }
}

/// A card whose name or front face name matched a name key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardName {
    pub card_id: Uuid,
    pub name_key: String,
    pub front_face_key: String,
}

/// A card whose preferred printing is wanted, within `set` when given (lower case).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CardPick {
    pub card_id: Uuid,
    pub set: Option<String>,
}

/// Which identifier field resolved an identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    VariantId,
    CatalogAId,
    CatalogBId,
    CatalogCId,
    SetAndCollectorNumber,
    CardId,
    Name,
}

/// Why an identifier did not resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnresolvedReason {
    /// Every field was absent or blank.
    Empty,
    NotFound,
    /// The fields matched more than one card and nothing more precise was given.
    Ambiguous,
    /// It resolved, but the printing is neither legal nor restricted in the requested format.
    NotLegalInFormat,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Position in the request.
    pub index: usize,
    pub input: CardIdentifier,
    pub matched_by: MatchedBy,
    pub printing: Printing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub index: usize,
    pub input: CardIdentifier,
    pub reason: UnresolvedReason,
}

/// Every identifier of a request lands in exactly one of the two lists, each in request order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolution {
    pub resolved: Vec<Resolved>,
    pub unresolved: Vec<Unresolved>,
}
