//! Decks: their content, history, visibility and ownership rules, and the listing.

mod model;
pub mod ports;
mod query;
pub mod text;
pub mod trending;

pub use model::{
    Author, CardSnapshot, Deck, DeckCard, DeckContent, DeckId, DeckSummary, DeckVersion,
    FeaturedCard, FeaturedChoice, FeaturedSlot, HistoryType, Provenance, Visibility,
};
pub use query::{
    DEFAULT_PAGE_SIZE, DeckFilters, DeckQuery, DeckSort, MAX_PAGE_SIZE, Page, PageRequest,
    RESULT_WINDOW, SortOrder,
};
