//! The catalog port. See the crate's error contract in [`crate::ports`].
//!
//! Every lookup takes all the keys of one request at once, so that resolving any number of
//! identifiers costs a bounded number of store queries.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

use super::deck_rules::{CardFacts, Legality};
use crate::events::EventRecord;

use super::{CardName, CardPick, CatalogCounts, CatalogEntry, Format, Game, PrintingKeys};

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait CatalogRepository: Send + Sync {
    /// Every game, in display order, with sections in game order.
    async fn games(&self) -> anyhow::Result<Vec<Game>>;
    /// The game with this slug, `None` when there is none; shared, as every request with a
    /// `{game}` segment reads it.
    async fn game(&self, slug: &str) -> anyhow::Result<Option<Arc<Game>>>;
    /// The formats of `game`, in display order (empty for an unknown game), shared: every
    /// list and detail page reads them, and they change only with a migration.
    async fn formats(&self, game: &str) -> anyhow::Result<Arc<[Format]>>;

    /// Inserts or replaces, by variant id, each entry and its card (by card id: name, face
    /// names, type line and colour identity are taken from the last entry of that card).
    /// Entries with `text_rules` store them by the card's name (replacing any seeded ones).
    /// Idempotent; one transaction. An unknown game is an error.
    async fn store_entries(&self, game: &str, entries: &[CatalogEntry]) -> anyhow::Result<()>;

    /// Records each card's legality in each format of the game from the entries that speak
    /// for it ([`CatalogEntry::speaking_for_legality`]), when it differs from the one in force
    /// at `imported_at` in the card's history, from `imported_at` on (statuses other than the
    /// four [`Legality`] values are left out of the history). The entries' cards must be
    /// stored ([`Self::store_entries`]) first. Idempotent; one transaction.
    async fn record_imported_legalities(
        &self,
        game: &str,
        entries: &[CatalogEntry],
        imported_at: OffsetDateTime,
    ) -> anyhow::Result<()>;

    /// [`Self::store_entries`], then [`Self::record_imported_legalities`]: two transactions.
    async fn upsert(
        &self,
        game: &str,
        entries: &[CatalogEntry],
        imported_at: OffsetDateTime,
    ) -> anyhow::Result<()> {
        self.store_entries(game, entries).await?;
        self.record_imported_legalities(game, entries, imported_at)
            .await
    }

    /// The deck-building facts of each card of `game` among `card_ids` (unknown ids are left
    /// out): name, type line, colour identity, rules-text allowances and the legality history
    /// in each of the game's formats. Costs no statement per request where the store holds
    /// the game's facts in process, and no copy: each card's facts are shared, so a check of a
    /// 100-card deck or a card's statistics (71 cards) allocates nothing for them.
    async fn card_facts(
        &self,
        game: &str,
        card_ids: &[Uuid],
    ) -> anyhow::Result<Vec<Arc<CardFacts>>>;

    /// Records that `card_id` has `status` in `format` from `from` on (an operator's change),
    /// replacing a record of the same card, format and time.
    async fn record_legality(
        &self,
        game: &str,
        card_id: Uuid,
        format: &str,
        status: Legality,
        from: OffsetDateTime,
    ) -> anyhow::Result<()>;
    async fn counts(&self, game: &str) -> anyhow::Result<CatalogCounts>;

    /// Writes the `catalog.imported` event of an import whose batches have all committed.
    async fn record_import(&self, event: &EventRecord) -> anyhow::Result<()>;

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
