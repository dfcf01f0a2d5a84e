//! The catalog use cases: games and formats, importing printings, resolving identifiers.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::try_join;
use futures_util::{Stream, StreamExt as _};
use uuid::Uuid;

use super::ports::CatalogRepository;
use super::resolve::{self, Found};
use super::{CardIdentifier, CatalogCounts, CatalogEntry, Format, Game, Printing, Resolution};
use crate::events::{EventType, Origin};

/// The most identifiers one resolution takes (contract: more is a 400).
pub const MAX_IDENTIFIERS: usize = 1000;

#[derive(Debug, thiserror::Error)]
pub enum GameNotFound {
    #[error("no such game")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Clone)]
pub struct CatalogService {
    repository: Arc<dyn CatalogRepository>,
}

impl CatalogService {
    pub fn new(repository: Arc<dyn CatalogRepository>) -> Self {
        Self { repository }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn games(&self) -> anyhow::Result<Vec<Game>> {
        self.repository.games().await
    }

    /// The game of a `{game}` path segment; `NotFound` for an unknown slug.
    #[tracing::instrument(level = "debug", skip_all, fields(game = slug))]
    pub async fn game(&self, slug: &str) -> Result<Arc<Game>, GameNotFound> {
        self.repository
            .game(slug)
            .await?
            .ok_or(GameNotFound::NotFound)
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn formats(&self, game: &Game) -> anyhow::Result<Arc<[Format]>> {
        self.repository.formats(&game.slug).await
    }

    /// The deck-building facts (name, type line, ...) of each card of `game` among `card_ids`;
    /// unknown ids are left out.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, cards = card_ids.len()))]
    pub async fn card_facts(
        &self,
        game: &Game,
        card_ids: &[Uuid],
    ) -> anyhow::Result<Vec<std::sync::Arc<super::deck_rules::CardFacts>>> {
        self.repository.card_facts(&game.slug, card_ids).await
    }

    /// A format of `game` by UUID or by slug (case-insensitive); `None` when it has none such.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn format(&self, game: &Game, id_or_slug: &str) -> anyhow::Result<Option<Format>> {
        let wanted = id_or_slug.trim();
        let id = Uuid::parse_str(wanted).ok();
        Ok(self
            .formats(game)
            .await?
            .iter()
            .find(|format| Some(format.id) == id || format.slug.eq_ignore_ascii_case(wanted))
            .cloned())
    }

    /// Stores the batches of an import, in order, and records the legality changes they bring
    /// from `imported_at` (the day its file was made); idempotent. Each batch is two
    /// transactions: its cards and printings are stored, then its legalities are compared
    /// with each card's history and recorded. The two are pipelined: one batch's legalities
    /// are recorded while the next batch's cards are stored, so a store that runs them on
    /// two connections keeps two cores busy. A batch's legalities are recorded after its
    /// cards are stored, and in file order.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn import_batches(
        &self,
        game: &Game,
        batches: impl Stream<Item = Vec<CatalogEntry>>,
        imported_at: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        let mut batches = std::pin::pin!(batches);
        let mut stored: Vec<CatalogEntry> = Vec::new();
        while let Some(batch) = batches.next().await {
            if batch.is_empty() {
                continue;
            }
            try_join(
                self.record_legalities(game, &stored, imported_at),
                self.repository.store_entries(&game.slug, &batch),
            )
            .await?;
            stored = batch;
        }
        self.record_legalities(game, &stored, imported_at).await
    }

    async fn record_legalities(
        &self,
        game: &Game,
        entries: &[CatalogEntry],
        imported_at: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        self.repository
            .record_imported_legalities(&game.slug, entries, imported_at)
            .await
    }

    /// [`Self::import_batches`] of one batch.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, entries = entries.len()))]
    pub async fn import_batch(
        &self,
        game: &Game,
        entries: &[CatalogEntry],
        imported_at: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        let batches = futures_util::stream::iter([entries.to_vec()]);
        self.import_batches(game, batches, imported_at).await
    }

    /// Records that an import of `game` by `origin` finished with `counts`: its
    /// `catalog.imported` event, once every batch has committed.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn finish_import(
        &self,
        game: &Game,
        origin: &Origin,
        counts: &CatalogCounts,
        at: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        let data = serde_json::json!({"cards": counts.cards, "printings": counts.printings});
        let event = origin.record(EventType::CatalogImported, &game.slug, None, at, data);
        self.repository.record_import(&event).await
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn counts(&self, game: &Game) -> anyhow::Result<CatalogCounts> {
        self.repository.counts(&game.slug).await
    }

    /// Resolves each identifier to a printing (see `resolve.rs` for the rules), keeping only
    /// printings legal or restricted in `format` when one is given.
    ///
    /// Costs at most three store lookups whatever the number of identifiers, in two steps: the
    /// exact keys (`find_printings`) are looked up at the same time as the names
    /// (`cards_named`, then `preferred_printings` for the cards they and the card ids pick).
    /// The caller enforces [`MAX_IDENTIFIERS`] at the edge, where the request is validated.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, identifiers = identifiers.len()))]
    pub async fn resolve(
        &self,
        game: &Game,
        identifiers: &[CardIdentifier],
        format: Option<&Format>,
    ) -> anyhow::Result<Resolution> {
        let planned: Vec<_> = identifiers
            .iter()
            .map(|identifier| resolve::attempts(identifier, &game.colors))
            .collect();
        let all = || planned.iter().flat_map(|(attempts, _)| attempts);

        let by_key = async {
            let keys = resolve::printing_keys(all());
            if keys.is_empty() {
                Ok(Vec::new())
            } else {
                self.repository.find_printings(&game.slug, &keys).await
            }
        };
        let by_card = async {
            let names = resolve::name_keys(all());
            let cards = if names.is_empty() {
                Vec::new()
            } else {
                self.repository.cards_named(&game.slug, &names).await?
            };
            let picks = resolve::card_picks(all(), &resolve::Names::new(&cards));
            let preferred: HashMap<_, _> = if picks.is_empty() {
                HashMap::new()
            } else {
                self.repository
                    .preferred_printings(&game.slug, &picks)
                    .await?
                    .into_iter()
                    .collect()
            };
            Ok((cards, preferred))
        };
        let (printings, (cards, preferred)) = try_join(by_key, by_card).await?;
        let found = Found {
            printings,
            cards,
            preferred,
        };
        Ok(resolve::decide(identifiers, &planned, &found, format))
    }

    /// The printings with these variant ids, in no particular order; unknown ids are left out.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, printings = variant_ids.len()))]
    pub async fn printings(
        &self,
        game: &Game,
        variant_ids: &[Uuid],
    ) -> anyhow::Result<Vec<Printing>> {
        if variant_ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys = super::PrintingKeys {
            variant_ids: variant_ids.to_vec(),
            ..Default::default()
        };
        Ok(self
            .repository
            .find_printings(&game.slug, &keys)
            .await?
            .into_iter()
            .map(|entry| entry.printing)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ports::MockCatalogRepository;
    use crate::catalog::{FORMAT_NAMESPACE, format_id};

    fn game() -> Game {
        Game {
            slug: "mtg".into(),
            name: "Magic".into(),
            sections: Vec::new(),
            colors: Vec::new(),
        }
    }

    /// One request of 1000 identifiers of every kind: each store lookup runs once.
    #[test]
    fn resolution_costs_one_lookup_per_step_whatever_its_size() {
        let mut repository = MockCatalogRepository::new();
        repository
            .expect_find_printings()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));
        repository
            .expect_cards_named()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));
        repository
            .expect_preferred_printings()
            .times(1)
            .returning(|_, _| Ok(Vec::new()));
        let service = CatalogService::new(Arc::new(repository));
        let identifiers: Vec<CardIdentifier> = (0..MAX_IDENTIFIERS)
            .map(|n| CardIdentifier {
                variant_id: (n % 3 == 0).then(|| Uuid::new_v4().to_string()),
                catalog_a_id: (n % 3 == 1).then(|| n.to_string()),
                card_id: Some(Uuid::new_v4().to_string()),
                name: Some(format!("card {n}")),
                ..CardIdentifier::default()
            })
            .collect();
        let resolution =
            futures_executor::block_on(service.resolve(&game(), &identifiers, None)).unwrap();
        assert_eq!(resolution.unresolved.len(), MAX_IDENTIFIERS);
    }

    #[test]
    fn nothing_to_look_up_asks_the_store_nothing() {
        let service = CatalogService::new(Arc::new(MockCatalogRepository::new()));
        let blank = vec![CardIdentifier::default(); 3];
        let resolution =
            futures_executor::block_on(service.resolve(&game(), &blank, None)).unwrap();
        assert_eq!(resolution.unresolved.len(), 3);
    }

    /// A batch of one entry of card `card`.
    fn batch(card: u128) -> Vec<CatalogEntry> {
        vec![crate::catalog::fixtures::entry(
            card,
            card,
            "tst",
            &card.to_string(),
        )]
    }

    /// A store that writes down each call, as `store N` or `record N` (N: the batch's card),
    /// and fails to store card `failing`.
    fn logging_store(failing: u128) -> (MockCatalogRepository, Arc<std::sync::Mutex<Vec<String>>>) {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut repository = MockCatalogRepository::new();
        let stores = log.clone();
        repository
            .expect_store_entries()
            .returning(move |_, entries| {
                let card = entries[0].printing.card_id.as_u128();
                stores.lock().unwrap().push(format!("store {card}"));
                anyhow::ensure!(card != failing, "the store failed");
                Ok(())
            });
        let records = log.clone();
        repository
            .expect_record_imported_legalities()
            .returning(move |_, entries, _| {
                let card = entries[0].printing.card_id.as_u128();
                records.lock().unwrap().push(format!("record {card}"));
                Ok(())
            });
        (repository, log)
    }

    fn import(repository: MockCatalogRepository, cards: &[u128]) -> anyhow::Result<()> {
        let service = CatalogService::new(Arc::new(repository));
        let batches = futures_util::stream::iter(cards.iter().map(|card| batch(*card)));
        let day = time::macros::datetime!(2019-04-01 00:00 UTC);
        futures_executor::block_on(service.import_batches(&game(), batches, day))
    }

    #[test]
    fn an_import_records_each_batch_after_storing_it_and_in_file_order() {
        let (repository, log) = logging_store(0);
        import(repository, &[1, 2, 3]).unwrap();
        let log = log.lock().unwrap().clone();
        let position = |call: &str| log.iter().position(|logged| logged == call).unwrap();
        for card in 1..=3 {
            assert!(position(&format!("store {card}")) < position(&format!("record {card}")));
        }
        let records: Vec<&String> = log
            .iter()
            .filter(|call| call.starts_with("record"))
            .collect();
        assert_eq!(records, ["record 1", "record 2", "record 3"]);
        assert_eq!(log.len(), 6, "{log:?}");
    }

    #[test]
    fn a_batch_that_cannot_be_stored_stops_the_import_before_its_legalities() {
        let (repository, log) = logging_store(2);
        let error = import(repository, &[1, 2, 3]).unwrap_err();
        assert_eq!(error.to_string(), "the store failed");
        let log = log.lock().unwrap().clone();
        assert!(!log.contains(&"record 2".to_owned()), "{log:?}");
        assert!(!log.contains(&"store 3".to_owned()), "{log:?}");
    }

    /// The seed migration writes format ids as literals; they must be the v5 computation.
    #[test]
    fn seeded_format_ids_are_uuid_v5_of_game_and_slug() {
        let migration = include_str!("../../../../migrations/2026-11-21-000100_catalog/up.sql");
        assert!(migration.contains(&FORMAT_NAMESPACE.to_string()));
        let seeded: Vec<&str> = migration
            .lines()
            .filter(|line| line.trim_start().starts_with("('") && line.matches('\'').count() >= 8)
            .filter(|line| line.trim_start().len() > 40 && line.as_bytes()[6 + 8] == b'-')
            .collect();
        assert_eq!(seeded.len(), 9, "{seeded:#?}");
        let fab = include_str!("../../../../migrations/2026-11-28-000400_fab_game/up.sql");
        let fab_seeded: Vec<&str> = fab
            .lines()
            .filter(|line| line.trim_start().starts_with("('"))
            .filter(|line| {
                line.split('\'')
                    .nth(1)
                    .is_some_and(|id| Uuid::parse_str(id).is_ok())
            })
            .collect();
        assert_eq!(fab_seeded.len(), 6, "{fab_seeded:#?}");
        for line in seeded.into_iter().chain(fab_seeded) {
            let fields: Vec<&str> = line.split('\'').collect();
            let (id, game, slug) = (fields[1], fields[3], fields[5]);
            assert_eq!(id, format_id(game, slug).to_string(), "{line}");
        }
    }
}
