//! Decks: their content, history, visibility and ownership rules, and the listing.

mod card_line;
pub mod card_search;
mod changes;
pub mod diff;
mod errors;
pub mod events;
pub mod export;
mod guide;
mod model;
pub mod ports;
mod query;
mod service;
#[cfg(test)]
pub(crate) mod test_decks;
pub mod text;
pub mod trending;

pub use card_line::{CardLineInput, MAX_CARD_LINES, QUANTITY_RANGE};
pub(crate) use card_line::{check_entries, check_quantity};
pub use changes::{DEFAULT_SOURCE_PROVIDERS, DeckChanges, DeckPolicy, FeaturedInput};
pub use errors::{
    CardStatsError, CreateDeckError, ExportPayloadError, FindDeckError, ForkError, ListDecksError,
    PutGuideError, RollbackError, SaveDeckError,
};
pub use guide::{
    ContentType, DeckGuide, GuideInput, GuideView, MAX_GUIDE_CHARACTERS, PREVIEW_CHARACTERS,
};
pub use model::{
    Author, CardSnapshot, Deck, DeckCard, DeckContent, DeckFacts, DeckId, DeckListing,
    DeckOverview, DeckReader, DeckSummary, DeckVersion, FeaturedCard, FeaturedChoice, FeaturedSlot,
    ForkOrigin, ForkedFrom, HistoryType, Provenance, SourceAccess, Visibility, forked_from_as_seen,
};
pub use query::{
    DEFAULT_PAGE_SIZE, DeckFilters, DeckQuery, DeckSort, MAX_PAGE_SIZE, Page, PageRequest,
    RESULT_WINDOW, SortOrder, contains, within,
};
pub use service::{DeckHistory, DeckService, ForkRequest, ListRequest, Visitor, summarize};
