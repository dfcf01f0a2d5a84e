//! The catalog port. See the crate's error contract in [`crate::ports`].
//!
//! Every lookup takes all the keys of one request at once, so that resolving any number of
//! identifiers costs a bounded number of store queries.

use async_trait::async_trait;

use super::{CardName, CardPick, CatalogCounts, CatalogEntry, Format, Game, PrintingKeys};

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait CatalogRepository: Send + Sync {
    /// Every game, in display order, with sections in game order.
    async fn games(&self) -> anyhow::Result<Vec<Game>>;
    /// The game with this slug, `None` when there is none.
    async fn game(&self, slug: &str) -> anyhow::Result<Option<Game>>;
    /// The formats of `game`, in display order (empty for an unknown game).
    async fn formats(&self, game: &str) -> anyhow::Result<Vec<Format>>;

    /// Inserts or replaces, by variant id, each entry and its card (by card id: name and face
    /// names are taken from the last entry of that card). Idempotent; one transaction.
    /// An unknown game is an error.
    async fn upsert(&self, game: &str, entries: &[CatalogEntry]) -> anyhow::Result<()>;
    async fn counts(&self, game: &str) -> anyhow::Result<CatalogCounts>;

    /// Every printing of `game` matching any key: variant id, one of the catalog ids, or
    /// (set, collector number). In any order, each printing once.
    async fn find_printings(
        &self,
        game: &str,
        keys: &PrintingKeys,
    ) -> anyhow::Result<Vec<CatalogEntry>>;

    /// Every card of `game` whose name key or front face key is among `name_keys`.
    async fn cards_named(&self, game: &str, name_keys: &[String]) -> anyhow::Result<Vec<CardName>>;

    /// For each pick, the card's most preferred printing (within the pick's set, when given):
    /// the lowest preference, then the latest `released_at` (unknown dates last), then the
    /// lowest variant id. Picks with no such printing are left out.
    async fn preferred_printings(
        &self,
        game: &str,
        picks: &[CardPick],
    ) -> anyhow::Result<Vec<(CardPick, CatalogEntry)>>;
}
