//! Decks for unit tests: the fields a test does not care about left empty, as a fresh insert
//! stores them.

use time::OffsetDateTime;

use super::model::{Deck, DeckCard, DeckContent, DeckId, DeckSummary, Provenance, Visibility};
use super::ports::NewDeck;
use crate::identity::{UserId, Username};

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
        created_at: at,
    };
    new.as_inserted(Username::parse(username).expect("a valid username"))
}
