//! The catalog in memory, seeded with the same games and formats as the migrations, with the
//! indexes that make resolution independent of the catalog's size.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use deckhand_domain::catalog::ports::CatalogRepository;
use deckhand_domain::catalog::{
    CardName, CardPick, CatalogCounts, CatalogEntry, CatalogIndex, Format, Game, PrintingKeys,
    Section, format_id, name_key,
};
use uuid::Uuid;

use crate::Store;

/// One game's cards and printings, and the index of them that lookups read: built again, when
/// next read, after every change.
#[derive(Debug, Default)]
struct GameCatalog {
    cards: HashMap<Uuid, CardName>,
    printings: HashMap<Uuid, CatalogEntry>,
    index: Option<Arc<CatalogIndex>>,
}

impl GameCatalog {
    fn upsert(&mut self, entry: &CatalogEntry) {
        let card_id = entry.printing.card_id;
        self.cards.insert(
            card_id,
            CardName {
                card_id,
                name_key: name_key(&entry.printing.name),
                front_face_key: name_key(entry.front_face_name()),
            },
        );
        self.printings
            .insert(entry.printing.variant_id, entry.clone());
        self.index = None;
    }

    fn index(&mut self) -> Arc<CatalogIndex> {
        self.index
            .get_or_insert_with(|| {
                Arc::new(CatalogIndex::new(
                    self.cards.values().cloned().collect(),
                    self.printings.values().cloned(),
                ))
            })
            .clone()
    }
}

#[derive(Debug)]
pub(crate) struct Tables {
    games: Vec<(Game, Vec<Format>)>,
    catalogs: HashMap<String, GameCatalog>,
}

impl Default for Tables {
    /// The rows `migrations/2026-11-21-000100_catalog` seeds; the contract suite compares them.
    fn default() -> Self {
        let section = |key: &str, label: &str, counted: bool| Section {
            key: key.into(),
            label: label.into(),
            counted,
        };
        let formats = |game: &str, list: &[(&str, &str)]| -> Vec<Format> {
            list.iter()
                .map(|(slug, name)| Format {
                    id: format_id(game, slug),
                    slug: (*slug).into(),
                    name: (*name).into(),
                })
                .collect()
        };
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
        let mtg = Game {
            slug: "mtg".into(),
            name: "Magic: The Gathering".into(),
            sections: vec![
                section("commander", "Commander", true),
                section("companion", "Companion", true),
                section("mainboard", "Deck", true),
                section("sideboard", "Sideboard", true),
                section("maybeboard", "Maybeboard", false),
            ],
            colors: strings(&["W", "U", "B", "R", "G"]),
        };
        let lorcana = Game {
            slug: "lorcana".into(),
            name: "Disney Lorcana".into(),
            sections: vec![
                section("mainboard", "Deck", true),
                section("maybeboard", "Maybeboard", false),
            ],
            colors: strings(&["Amber", "Amethyst", "Emerald", "Ruby", "Sapphire", "Steel"]),
        };
        Self {
            games: vec![
                (
                    mtg,
                    formats(
                        "mtg",
                        &[
                            ("standard", "Standard"),
                            ("pioneer", "Pioneer"),
                            ("modern", "Modern"),
                            ("legacy", "Legacy"),
                            ("vintage", "Vintage"),
                            ("pauper", "Pauper"),
                            ("commander", "Commander"),
                        ],
                    ),
                ),
                (
                    lorcana,
                    formats(
                        "lorcana",
                        &[
                            ("core", "Core Constructed"),
                            ("infinity", "Infinity Constructed"),
                        ],
                    ),
                ),
            ],
            catalogs: HashMap::new(),
        }
    }
}

impl MemoryCatalog {
    /// The index of `game`'s catalog; an empty one for a game with no catalog.
    fn index(&self, game: &str) -> Arc<CatalogIndex> {
        let mut state = self.0.lock();
        state
            .catalog
            .catalogs
            .get_mut(game)
            .map(GameCatalog::index)
            .unwrap_or_default()
    }
}

pub(crate) struct MemoryCatalog(pub(crate) Store);

#[async_trait]
impl CatalogRepository for MemoryCatalog {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn games(&self) -> anyhow::Result<Vec<Game>> {
        let state = self.0.lock();
        Ok(state
            .catalog
            .games
            .iter()
            .map(|(game, _)| game.clone())
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = slug))]
    async fn game(&self, slug: &str) -> anyhow::Result<Option<Game>> {
        let state = self.0.lock();
        Ok(state
            .catalog
            .games
            .iter()
            .find(|(game, _)| game.slug == slug)
            .map(|(game, _)| game.clone()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn formats(&self, game: &str) -> anyhow::Result<Vec<Format>> {
        let state = self.0.lock();
        Ok(state
            .catalog
            .games
            .iter()
            .find(|(known, _)| known.slug == game)
            .map(|(_, formats)| formats.clone())
            .unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, entries = entries.len()))]
    async fn upsert(&self, game: &str, entries: &[CatalogEntry]) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        let tables = &mut state.catalog;
        // Like the foreign key in PostgreSQL.
        anyhow::ensure!(
            tables.games.iter().any(|(known, _)| known.slug == game),
            "no game {game:?}"
        );
        let catalog = tables.catalogs.entry(game.to_owned()).or_default();
        for entry in entries {
            catalog.upsert(entry);
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn counts(&self, game: &str) -> anyhow::Result<CatalogCounts> {
        let state = self.0.lock();
        Ok(state
            .catalog
            .catalogs
            .get(game)
            .map(|catalog| CatalogCounts {
                cards: catalog.cards.len() as u64,
                printings: catalog.printings.len() as u64,
            })
            .unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn find_printings(
        &self,
        game: &str,
        keys: &PrintingKeys,
    ) -> anyhow::Result<Vec<CatalogEntry>> {
        Ok(self.index(game).find_printings(keys))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn cards_named(&self, game: &str, name_keys: &[String]) -> anyhow::Result<Vec<CardName>> {
        Ok(self.index(game).cards_named(name_keys))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn preferred_printings(
        &self,
        game: &str,
        picks: &[CardPick],
    ) -> anyhow::Result<Vec<(CardPick, CatalogEntry)>> {
        Ok(self.index(game).preferred_printings(picks))
    }
}
