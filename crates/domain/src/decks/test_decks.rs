//! Decks for unit tests: the fields a test does not care about left empty, as a fresh insert
//! stores them.

use time::OffsetDateTime;

use super::model::{Deck, DeckCard, DeckContent, DeckId, DeckSummary, Provenance, Visibility};
use super::ports::NewDeck;
use crate::catalog::{FeaturedSlot, Game, Section};
use crate::events::{Actor, EventId, Origin};
use crate::identity::{UserId, Username};

/// mtg as `migrations/2026-11-21-000100_catalog` seeds it: its sections in game order (the
/// maybeboard not counted) and its colours.
pub(crate) fn mtg() -> Game {
    Game {
        slug: "mtg".into(),
        name: "Magic: The Gathering".into(),
        sections: vec![
            section(
                "commander",
                "Commander",
                true,
                Some(FeaturedSlot::Commander),
            ),
            section(
                "companion",
                "Companion",
                true,
                Some(FeaturedSlot::Companion),
            ),
            section("mainboard", "Deck", true, None),
            section("sideboard", "Sideboard", true, None),
            section("maybeboard", "Maybeboard", false, None),
        ],
        colors: ["W", "U", "B", "R", "G"].map(String::from).into(),
    }
}

/// fab as `migrations/2026-11-28-000400_fab_game` seeds it: the hero section fills the hero
/// slot (`2026-11-28-000600_featured_sections`), the colours are the pitches.
pub(crate) fn fab() -> Game {
    Game {
        slug: "fab".into(),
        name: "Flesh and Blood".into(),
        sections: vec![
            section("hero", "Hero", true, Some(FeaturedSlot::Hero)),
            section("arena", "Arena", true, None),
            section("deck", "Deck", true, None),
            section("inventory", "Inventory", true, None),
            section("maybeboard", "Maybeboard", false, None),
        ],
        colors: ["red", "yellow", "blue"].map(String::from).into(),
    }
}

fn section(key: &str, label: &str, counted: bool, featured_slot: Option<FeaturedSlot>) -> Section {
    Section {
        key: key.into(),
        label: label.into(),
        counted,
        featured_slot,
    }
}

/// Content of a name, a visibility and cards; every optional field empty, not legal.
pub(crate) fn content(name: &str, visibility: Visibility, cards: Vec<DeckCard>) -> DeckContent {
    DeckContent {
        name: name.into(),
        notes: String::new(),
        visibility,
        format_id: None,
        youtube_url: None,
        thumbnail: None,
        legal: false,
        archetype: None,
        cards,
        featured: None,
    }
}

/// An mtg deck of `owner` (named `username`) as the store answers its insert at `at`: version
/// 1, manual, no counters, no summary.
pub(crate) fn deck(
    id: DeckId,
    owner: UserId,
    username: &str,
    content: DeckContent,
    at: OffsetDateTime,
) -> Deck {
    let new = NewDeck {
        id,
        game: "mtg".into(),
        owner,
        content,
        summary: DeckSummary::default(),
        provenance: Provenance::manual(),
        forked_from: None,
        created_at: at,
        event: super::events::created(
            &Origin {
                event_id: EventId(id.0),
                actor: Actor::operator(),
            },
            "mtg",
            id,
            None,
            at,
        ),
    };
    new.as_inserted(Username::parse(username).expect("a valid username"), None)
}
