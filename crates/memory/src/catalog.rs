//! The catalog in memory, seeded with the same games and formats as the migrations, with the
//! indexes that make resolution independent of the catalog's size.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use async_trait::async_trait;
use deckhand_domain::catalog::ports::CatalogRepository;
use deckhand_domain::catalog::{
    CardName, CardPick, CatalogCounts, CatalogEntry, Format, Game, PrintingKeys, Section,
    format_id, name_key,
};
use uuid::Uuid;

use crate::Store;

#[derive(Debug)]
struct Card {
    name_key: String,
    front_face_key: String,
    printings: BTreeSet<Uuid>,
}

#[derive(Debug, Default)]
struct GameCatalog {
    cards: HashMap<Uuid, Card>,
    printings: HashMap<Uuid, CatalogEntry>,
    by_name: HashMap<String, BTreeSet<Uuid>>,
    by_set_number: HashMap<(String, String), BTreeSet<Uuid>>,
    by_catalog: [HashMap<String, BTreeSet<Uuid>>; 3],
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

fn catalog_id(entry: &CatalogEntry, which: usize) -> Option<&String> {
    [
        &entry.printing.catalog_a_id,
        &entry.printing.catalog_b_id,
        &entry.printing.catalog_c_id,
    ][which]
        .as_ref()
}

fn unindex<K: std::hash::Hash + Eq>(index: &mut HashMap<K, BTreeSet<Uuid>>, key: K, id: Uuid) {
    if let Some(ids) = index.get_mut(&key) {
        ids.remove(&id);
        if ids.is_empty() {
            index.remove(&key);
        }
    }
}

impl GameCatalog {
    fn remove_printing(&mut self, variant_id: Uuid) {
        let Some(old) = self.printings.remove(&variant_id) else {
            return;
        };
        let set_number = (
            old.printing.set.clone(),
            old.printing.collector_number.clone(),
        );
        unindex(&mut self.by_set_number, set_number, variant_id);
        for which in 0..3 {
            if let Some(id) = catalog_id(&old, which) {
                unindex(&mut self.by_catalog[which], id.clone(), variant_id);
            }
        }
        if let Some(card) = self.cards.get_mut(&old.printing.card_id) {
            card.printings.remove(&variant_id);
        }
    }

    fn upsert_card(&mut self, entry: &CatalogEntry) {
        let card_id = entry.printing.card_id;
        let name = name_key(&entry.printing.name);
        let front = name_key(entry.front_face_name());
        let printings = match self.cards.remove(&card_id) {
            Some(old) => {
                unindex(&mut self.by_name, old.name_key, card_id);
                unindex(&mut self.by_name, old.front_face_key, card_id);
                old.printings
            }
            None => BTreeSet::new(),
        };
        self.by_name
            .entry(name.clone())
            .or_default()
            .insert(card_id);
        self.by_name
            .entry(front.clone())
            .or_default()
            .insert(card_id);
        self.cards.insert(
            card_id,
            Card {
                name_key: name,
                front_face_key: front,
                printings,
            },
        );
    }

    fn insert_printing(&mut self, entry: &CatalogEntry) {
        let variant_id = entry.printing.variant_id;
        self.remove_printing(variant_id);
        let set_number = (
            entry.printing.set.clone(),
            entry.printing.collector_number.clone(),
        );
        self.by_set_number
            .entry(set_number)
            .or_default()
            .insert(variant_id);
        for which in 0..3 {
            if let Some(id) = catalog_id(entry, which) {
                self.by_catalog[which]
                    .entry(id.clone())
                    .or_default()
                    .insert(variant_id);
            }
        }
        if let Some(card) = self.cards.get_mut(&entry.printing.card_id) {
            card.printings.insert(variant_id);
        }
        self.printings.insert(variant_id, entry.clone());
    }

    /// The port's order: preference, newest (unknown dates last), lowest variant id.
    fn preferred(&self, pick: &CardPick) -> Option<&CatalogEntry> {
        self.cards
            .get(&pick.card_id)?
            .printings
            .iter()
            .filter_map(|id| self.printings.get(id))
            .filter(|entry| {
                pick.set
                    .as_ref()
                    .is_none_or(|set| entry.printing.set == *set)
            })
            .min_by_key(|entry| {
                (
                    entry.preference,
                    entry.released_at.is_none(),
                    std::cmp::Reverse(entry.released_at),
                    entry.printing.variant_id,
                )
            })
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
            catalog.upsert_card(entry);
            catalog.insert_printing(entry);
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
        let state = self.0.lock();
        let Some(catalog) = state.catalog.catalogs.get(game) else {
            return Ok(Vec::new());
        };
        let mut ids: BTreeSet<Uuid> = keys.variant_ids.iter().copied().collect();
        let indexed = [
            &keys.catalog_a_ids,
            &keys.catalog_b_ids,
            &keys.catalog_c_ids,
        ];
        for (which, wanted) in indexed.into_iter().enumerate() {
            for id in wanted {
                ids.extend(catalog.by_catalog[which].get(id).into_iter().flatten());
            }
        }
        for key in &keys.set_numbers {
            ids.extend(catalog.by_set_number.get(key).into_iter().flatten());
        }
        Ok(ids
            .iter()
            .filter_map(|id| catalog.printings.get(id))
            .cloned()
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn cards_named(&self, game: &str, name_keys: &[String]) -> anyhow::Result<Vec<CardName>> {
        let state = self.0.lock();
        let Some(catalog) = state.catalog.catalogs.get(game) else {
            return Ok(Vec::new());
        };
        let ids: BTreeSet<Uuid> = name_keys
            .iter()
            .flat_map(|key| catalog.by_name.get(key).into_iter().flatten())
            .copied()
            .collect();
        Ok(ids
            .into_iter()
            .filter_map(|card_id| {
                catalog.cards.get(&card_id).map(|card| CardName {
                    card_id,
                    name_key: card.name_key.clone(),
                    front_face_key: card.front_face_key.clone(),
                })
            })
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn preferred_printings(
        &self,
        game: &str,
        picks: &[CardPick],
    ) -> anyhow::Result<Vec<(CardPick, CatalogEntry)>> {
        let state = self.0.lock();
        let Some(catalog) = state.catalog.catalogs.get(game) else {
            return Ok(Vec::new());
        };
        let unique: BTreeMap<&CardPick, ()> = picks.iter().map(|pick| (pick, ())).collect();
        Ok(unique
            .into_keys()
            .filter_map(|pick| {
                catalog
                    .preferred(pick)
                    .map(|entry| (pick.clone(), entry.clone()))
            })
            .collect())
    }
}
