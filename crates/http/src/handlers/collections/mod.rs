//! A user's collection of a game: listing, signed-delta PATCH, CSV and deck-text import, CSV
//! export; and (in `decks::needs`) what a deck still needs from it.

pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod list;
pub(crate) mod patch;

use deckhand_domain::collections::{CollectionEntry, CollectionTotals};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::pagination::Pagination;

/// What a collection holds after a write (or now).
#[derive(Debug, Serialize, ToSchema)]
pub struct CollectionTotalsDto {
    /// Distinct (printing, finish) pairs held.
    entries: u64,
    /// The sum of their quantities.
    cards: u64,
    /// 0 for a collection never written; one more for each successful write.
    version: i64,
}

impl From<CollectionTotals> for CollectionTotalsDto {
    fn from(totals: CollectionTotals) -> Self {
        Self {
            entries: totals.entries,
            cards: totals.cards,
            version: totals.version,
        }
    }
}

/// Copies of one printing in one finish.
#[derive(Debug, Serialize, ToSchema)]
pub struct CollectionEntryDto {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    #[serde(rename = "variantId")]
    variant_id: Uuid,
    name: String,
    set: String,
    collector_number: String,
    foil: bool,
    quantity: u32,
    /// How many of them the owner would trade (at most `quantity`).
    trade_quantity: u32,
}

impl From<CollectionEntry> for CollectionEntryDto {
    fn from(entry: CollectionEntry) -> Self {
        Self {
            card_id: entry.card.card_id,
            variant_id: entry.card.variant_id,
            name: entry.card.name,
            set: entry.card.set,
            collector_number: entry.card.collector_number,
            foil: entry.foil,
            quantity: entry.quantity,
            trade_quantity: entry.trade_quantity,
        }
    }
}

/// A page of a collection, with its totals.
#[derive(Debug, Serialize, ToSchema)]
pub struct CollectionPage {
    data: Vec<CollectionEntryDto>,
    pagination: Pagination,
    /// The whole collection's totals (not only the filtered entries').
    totals: CollectionTotalsDto,
}
