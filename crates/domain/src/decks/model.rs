//! Decks as the domain sees them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::identity::{UserId, Username};
use crate::readable::Readable;

use super::text::{ListLine, PrintingRef};
pub use crate::catalog::FeaturedSlot;
pub use crate::readable::Visibility;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DeckId(pub Uuid);

impl std::fmt::Display for DeckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What a deck keeps of a catalog printing, copied at write time so that reading a deck needs
/// no catalog lookups (and a later catalog import cannot change a saved version).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSnapshot {
    pub variant_id: Uuid,
    pub card_id: Uuid,
    pub name: String,
    pub set: String,
    pub collector_number: String,
    pub type_line: String,
    pub image_url: Option<String>,
    pub colors: Vec<String>,
}

impl CardSnapshot {
    /// This card as a line of the export's format: its name and catalog printing.
    pub(crate) fn printed_line(&self, quantity: u32, foil: bool) -> ListLine {
        ListLine {
            quantity,
            name: self.name.clone(),
            printing: Some(PrintingRef {
                set: self.set.clone(),
                collector_number: self.collector_number.clone(),
            }),
            foil,
        }
    }
}

/// One line of a deck: a printing in a section, with a quantity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckCard {
    pub section: String,
    pub quantity: u32,
    pub foil: bool,
    pub card: CardSnapshot,
}

/// A card the owner chose to feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeaturedChoice {
    pub slot: FeaturedSlot,
    pub foil: bool,
    pub card: CardSnapshot,
}

/// A featured card as shown: chosen, or derived from the commander and companion sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeaturedCard {
    pub slot: FeaturedSlot,
    pub slot_key: String,
    pub label: String,
    pub sort_order: u32,
    pub foil: bool,
    pub card: CardSnapshot,
}

/// Everything a version captures and a rollback restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckContent {
    pub name: String,
    pub notes: String,
    pub visibility: Visibility,
    pub format_id: Option<Uuid>,
    pub youtube_url: Option<String>,
    pub thumbnail: Option<String>,
    pub legal: bool,
    pub archetype: Option<String>,
    pub cards: Vec<DeckCard>,
    /// The owner's chosen featured cards; `None` (the default, and after the owner clears
    /// them) derives them from the commander and companion sections instead.
    pub featured: Option<Vec<FeaturedChoice>>,
}

/// Figures derived from the content when it is written, so lists need no computation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeckSummary {
    pub section_counts: BTreeMap<String, u32>,
    pub colors: Vec<String>,
    pub featured_cards: Vec<FeaturedCard>,
}

/// Where an imported deck came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    pub source_provider: String,
    pub source_external_id: Option<String>,
    pub source_external_version: Option<String>,
    pub source_external_url: Option<String>,
    pub source_imported_at: Option<OffsetDateTime>,
}

impl Provenance {
    pub fn manual() -> Self {
        Self {
            source_provider: "manual".into(),
            source_external_id: None,
            source_external_version: None,
            source_external_url: None,
            source_imported_at: None,
        }
    }
}

/// The deck and version a fork was copied from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ForkedFrom {
    pub deck_id: DeckId,
    pub version: i32,
}

/// What the read rule needs to know of a fork's source as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceAccess {
    pub visibility: Visibility,
    pub owner: UserId,
    pub is_archived: bool,
}

/// Where a fork came from, as a store reads it: the source it names, and what the read rule
/// needs to know of that source now (`None` when it is gone). Shown only through
/// [`ForkOrigin::seen_by`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkOrigin {
    pub source: ForkedFrom,
    pub access: Option<SourceAccess>,
}

impl ForkOrigin {
    /// The source as `viewer` may see it: named only while they may read it by id, so a
    /// fork never gives away the id of a deck hidden from its reader.
    pub fn seen_by(&self, viewer: Option<UserId>) -> Option<ForkedFrom> {
        let access = self.access?;
        Readable::by_id(viewer)
            .admits(access.visibility, access.owner, access.is_archived)
            .then_some(self.source)
    }
}

/// The source of a fork as `viewer` may see it ([`ForkOrigin::seen_by`]).
pub fn forked_from_as_seen(
    origin: Option<&ForkOrigin>,
    viewer: Option<UserId>,
) -> Option<ForkedFrom> {
    origin.and_then(|origin| origin.seen_by(viewer))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub id: UserId,
    pub username: Username,
}

/// What a list and a detail both show of a deck besides its content and provenance: who made
/// it and where, its counters, its fork and its dates. Declared once, carried by [`Deck`] and
/// [`DeckListing`] (`facts`), so a field both show is added here alone.
#[derive(Debug, Clone, PartialEq)]
pub struct DeckFacts {
    pub id: DeckId,
    pub game: String,
    pub author: Author,
    pub summary: DeckSummary,
    pub pageviews: i64,
    pub likes: i64,
    pub has_guide: bool,
    pub has_sideboard_guide: bool,
    /// The deck this one was forked from; `None` when it is no fork.
    pub fork: Option<ForkOrigin>,
    /// How many forks were made of this deck.
    pub forks: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A deck as read: its [`DeckFacts`], and what a list does not show.
#[derive(Debug, Clone, PartialEq)]
pub struct Deck {
    pub facts: DeckFacts,
    pub content: DeckContent,
    pub provenance: Provenance,
    pub is_archived: bool,
    pub version: i32,
}

impl Deck {
    /// What a list shows of this deck.
    pub fn listing(&self) -> DeckListing {
        DeckListing {
            facts: self.facts.clone(),
            name: self.content.name.clone(),
            visibility: self.content.visibility,
            format_id: self.content.format_id,
            archetype: self.content.archetype.clone(),
            has_video: self.content.youtube_url.is_some(),
            source_provider: self.provenance.source_provider.clone(),
        }
    }

    /// The deck this one was forked from, as `viewer` may see it ([`ForkOrigin::seen_by`]).
    pub fn forked_from(&self, viewer: Option<UserId>) -> Option<ForkedFrom> {
        forked_from_as_seen(self.facts.fork.as_ref(), viewer)
    }

    /// What a detail shows of this deck when its cards are not expanded.
    pub fn overview(&self) -> DeckOverview {
        DeckOverview {
            listing: self.listing(),
            notes: self.content.notes.clone(),
            source_external_id: self.provenance.source_external_id.clone(),
            source_external_url: self.provenance.source_external_url.clone(),
            version: self.version,
        }
    }

    pub fn is_owned_by(&self, user: Option<UserId>) -> bool {
        user == Some(self.facts.author.id)
    }

    /// Whether `rule` lets its viewer read this deck ([`Readable`]).
    pub fn is_readable(&self, rule: Readable) -> bool {
        rule.admits(
            self.content.visibility,
            self.facts.author.id,
            self.is_archived,
        )
    }

    /// Whether `viewer` may read this deck by id.
    pub fn is_visible_to(&self, viewer: Option<UserId>) -> bool {
        self.is_readable(Readable::by_id(viewer))
    }
}

/// A deck as lists show it: no card lines, notes or featured choices, so a page of them is
/// cheap to read (its summary carries the featured cards, section counts and colours).
#[derive(Debug, Clone, PartialEq)]
pub struct DeckListing {
    pub facts: DeckFacts,
    pub name: String,
    pub visibility: Visibility,
    pub format_id: Option<Uuid>,
    pub archetype: Option<String>,
    /// Whether the deck has a video (`youtube_url`).
    pub has_video: bool,
    pub source_provider: String,
}

impl DeckListing {
    /// The deck this one was forked from, as `viewer` may see it ([`ForkOrigin::seen_by`]).
    pub fn forked_from(&self, viewer: Option<UserId>) -> Option<ForkedFrom> {
        forked_from_as_seen(self.facts.fork.as_ref(), viewer)
    }
}

/// A deck as its detail shows it unless the cards are expanded: the listing with its notes,
/// external source and version, but no card lines or featured choices, so reading one leaves
/// the stored card list (the bulk of a deck row) untouched.
#[derive(Debug, Clone, PartialEq)]
pub struct DeckOverview {
    pub listing: DeckListing,
    pub notes: String,
    pub source_external_id: Option<String>,
    pub source_external_url: Option<String>,
    pub version: i32,
}

impl DeckOverview {
    /// Whether `viewer` may read this deck by id ([`Readable::by_id`]).
    pub fn is_visible_to(&self, viewer: Option<UserId>) -> bool {
        Readable::by_id(viewer).admits(self.listing.visibility, self.listing.facts.author.id, false)
    }
}

/// Who reads a deck by id: it counts only when it is of `game` and `viewer` may see it
/// ([`Deck::is_visible_to`], which stores apply in their query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckReader {
    pub game: String,
    pub viewer: Option<UserId>,
}

/// How a version came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryType {
    Create,
    Update,
    Rollback { restored_from: i32 },
}

impl HistoryType {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Rollback { .. } => "rollback",
        }
    }
}

/// One entry of a deck's history.
#[derive(Debug, Clone, PartialEq)]
pub struct DeckVersion {
    pub version_number: i32,
    pub history_type: HistoryType,
    pub content: DeckContent,
    pub summary: DeckSummary,
    pub edited_at: OffsetDateTime,
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn a_forks_source_is_named_only_to_those_who_may_read_it_now() {
        let (owner, other) = (UserId(Uuid::from_u128(1)), UserId(Uuid::from_u128(2)));
        let source = ForkedFrom {
            deck_id: DeckId(Uuid::from_u128(10)),
            version: 3,
        };
        let origin = |visibility, is_archived| ForkOrigin {
            source,
            access: Some(SourceAccess {
                visibility,
                owner,
                is_archived,
            }),
        };
        for viewer in [None, Some(owner), Some(other)] {
            assert_eq!(
                origin(Visibility::Public, false).seen_by(viewer),
                Some(source)
            );
            // Archived decks stay readable by id, and so does their name on a fork.
            assert_eq!(
                origin(Visibility::Public, true).seen_by(viewer),
                Some(source)
            );
            for hidden in [Visibility::Private, Visibility::Unlisted] {
                let expected = (viewer == Some(owner)).then_some(source);
                assert_eq!(origin(hidden, false).seen_by(viewer), expected);
            }
        }
        let gone = ForkOrigin {
            source,
            access: None,
        };
        assert_eq!(gone.seen_by(Some(owner)), None);
        assert_eq!(forked_from_as_seen(None, Some(owner)), None);
    }

    #[test]
    fn visibility_is_one_level_matched_case_insensitively() {
        assert_eq!(
            Visibility::parse_levels("v", &["Public".into()]),
            Ok(Visibility::Public)
        );
        assert_eq!(
            Visibility::parse_levels("v", &["UNLISTED".into()]),
            Ok(Visibility::Unlisted)
        );
        assert!(Visibility::parse_levels("v", &[]).is_err());
        assert!(Visibility::parse_levels("v", &["public".into(), "private".into()]).is_err());
        assert!(Visibility::parse_levels("v", &["friends".into()]).is_err());
    }
}
