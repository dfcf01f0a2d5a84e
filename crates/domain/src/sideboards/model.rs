//! Sideboard guides as the domain sees them (public spec 2.5 to 2.7).

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::decks::{Author, DeckId, FeaturedCard, Visibility};
use crate::identity::UserId;
use crate::readable::Readable;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GuideId(pub Uuid);

impl std::fmt::Display for GuideId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MatchupId(pub Uuid);

impl std::fmt::Display for MatchupId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// How hard a matchup is, from the guide's deck's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Difficulty {
    VeryEasy,
    Easy,
    Medium,
    Hard,
    VeryHard,
}

impl Difficulty {
    pub const ALL: [Self; 5] = [
        Self::VeryEasy,
        Self::Easy,
        Self::Medium,
        Self::Hard,
        Self::VeryHard,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::VeryEasy => "VERY_EASY",
            Self::Easy => "EASY",
            Self::Medium => "MEDIUM",
            Self::Hard => "HARD",
            Self::VeryHard => "VERY_HARD",
        }
    }

    /// The exact upper-case name; anything else is `None`.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|difficulty| difficulty.as_str() == value)
    }
}

/// Whether an override brings a card in from the sideboard or takes one out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OverrideType {
    In,
    Out,
}

impl OverrideType {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::In => "in",
            Self::Out => "out",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "in" => Some(Self::In),
            "out" => Some(Self::Out),
            _ => None,
        }
    }
}

/// One card a matchup brings in or takes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardOverride {
    pub special_card_type: OverrideType,
    pub card_id: String,
    pub card_name: String,
    pub quantity: u32,
    pub sort_order: i32,
}

/// What a matchup says; written whole by a create and by a PATCH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchupContent {
    pub opponent_deck_name: String,
    pub opponent_archetype: Option<String>,
    pub difficulty: Difficulty,
    pub notes: String,
    pub play_notes: String,
    pub draw_notes: String,
    pub sort_order: i32,
    pub thumbnail: Option<String>,
    pub is_featured: bool,
    pub special_card_overrides: Vec<CardOverride>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matchup {
    pub id: MatchupId,
    pub guide_id: GuideId,
    pub content: MatchupContent,
    pub created_at: OffsetDateTime,
}

/// The fields of a guide an owner writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuideContent {
    pub name: String,
    pub description: String,
    pub notes: String,
    pub visibility: Visibility,
    pub tags: Vec<String>,
    pub format: Option<String>,
    pub thumbnail: Option<String>,
    pub youtube_url: Option<String>,
    pub premium: bool,
}

/// What lists show of the primary deck (`include=summary`): its featured cards and colours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrimaryDeckSummary {
    pub featured_cards: Vec<FeaturedCard>,
    pub colors: Vec<String>,
}

/// A guide as listed and as its detail starts.
#[derive(Debug, Clone, PartialEq)]
pub struct SideboardGuide {
    pub id: GuideId,
    pub game: String,
    pub author: Author,
    pub content: GuideContent,
    pub primary_deck: DeckId,
    /// The primary deck's visibility; the deck always belongs to the guide's author.
    pub primary_deck_visibility: Visibility,
    /// Loaded only when a list asks for `include=summary`, and by the detail.
    pub primary_summary: Option<PrimaryDeckSummary>,
    pub matchup_count: u32,
    pub pageviews: i64,
    pub likes: i64,
    pub is_archived: bool,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

impl SideboardGuide {
    pub fn is_owned_by(&self, user: Option<UserId>) -> bool {
        user == Some(self.author.id)
    }

    /// Public guides are visible to every signed-in caller; unlisted and private ones to their
    /// owner only (the same rule as decks).
    pub fn is_visible_to(&self, viewer: Option<UserId>) -> bool {
        self.is_readable(Readable::by_id(viewer))
    }

    /// Whether `rule` lets its viewer read this guide ([`Readable`]).
    pub fn is_readable(&self, rule: Readable) -> bool {
        rule.admits(self.content.visibility, self.author.id, self.is_archived)
    }

    pub fn has_matchups(&self) -> bool {
        self.matchup_count > 0
    }

    /// The guide as `viewer` may read it: the primary deck's summary only when that deck is
    /// visible to the viewer too, so a public guide never reveals a private deck's cards.
    pub fn seen_by(mut self, viewer: Option<UserId>) -> Self {
        if !Readable::by_id(viewer).admits(self.primary_deck_visibility, self.author.id, false) {
            self.primary_summary = self.primary_summary.map(|_| PrimaryDeckSummary::default());
        }
        self
    }
}

/// A deck attached to a guide, as the detail lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachedDeck {
    pub id: DeckId,
    pub name: String,
    pub owner: UserId,
    pub visibility: Visibility,
    pub is_primary: bool,
}

impl AttachedDeck {
    pub fn is_visible_to(&self, viewer: Option<UserId>) -> bool {
        Readable::by_id(viewer).admits(self.visibility, self.owner, false)
    }
}

/// The detail (public spec 2.6): the guide, its deck membership (primary first, then in the
/// order they were attached) and its matchups (by `sort_order`, then creation).
#[derive(Debug, Clone, PartialEq)]
pub struct GuideDetail {
    pub guide: SideboardGuide,
    pub decks: Vec<AttachedDeck>,
    pub matchups: Vec<Matchup>,
}

impl GuideDetail {
    /// The detail as `viewer` may read it: decks the viewer may not see are left out.
    pub fn seen_by(self, viewer: Option<UserId>) -> Self {
        Self {
            guide: self.guide.seen_by(viewer),
            decks: self
                .decks
                .into_iter()
                .filter(|deck| deck.is_visible_to(viewer))
                .collect(),
            matchups: self.matchups,
        }
    }
}
