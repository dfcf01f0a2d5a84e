//! The card catalog: games and their sections, colours and formats; cards and their printings;
//! the rules that turn catalog files into printings ([`source`]) and partner-supplied
//! identifiers into printings ([`CatalogService::resolve`]).

pub mod deck_rules;
#[cfg(test)]
mod fixtures;
pub mod history;
mod index;
mod model;
pub mod ports;
mod resolve;
pub mod seeds;
mod service;
pub mod source;

pub use crate::validation::is_game_slug;
pub use index::CatalogIndex;
pub use model::{
    CardIdentifier, CardName, CardPick, CatalogCounts, CatalogEntry, FORMAT_NAMESPACE,
    FeaturedSlot, Format, Game, MatchedBy, Preference, Printing, PrintingKeys, Resolution,
    Resolved, Section, Unresolved, UnresolvedReason, format_id, name_key,
};
pub use service::{CatalogService, GameNotFound, MAX_IDENTIFIERS};
