//! Collections: the cards a user owns in a game, changed by signed deltas (all or nothing), read
//! back page by page, imported from and exported to other deck sites' CSV layouts, and set
//! against a deck to say what it still needs.
//!
//! Nothing here knows a game's cards or sections by name: sections come from the game's data
//! (counted or not, in game order), cards from its catalog.

mod errors;
mod events;
mod layouts;
mod model;
mod needs;
pub mod ports;
mod service;
#[cfg(test)]
mod tests;

pub use errors::{ImportError, NeedsError, PatchCollectionError};
pub use layouts::{
    CsvLayout, CsvStream, ImportRow, ParsedImport, UnreadableRow, export_csv, parse_csv,
};
pub use model::{
    CollectionCard, CollectionEntry, CollectionFilter, CollectionLine, CollectionQuery,
    CollectionTotals, CollectionWrite, Held, MAX_CHANGES, WriteMode, held_after, merge_lines,
};
pub use needs::{NeedItem, Needs, needs, shopping_list};
pub use service::{
    CollectionChange, CollectionService, ImportOutcome, ImportRequest, ImportSource, RowProblem,
};
