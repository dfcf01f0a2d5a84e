//! The catalog in memory, seeded with the same games and formats as the migrations, with the
//! indexes that make resolution independent of the catalog's size.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use deckhand_domain::catalog::history::{AnnouncedChange, announcements_by_name, merge_announced};
use deckhand_domain::catalog::ports::CatalogRepository;
use deckhand_domain::catalog::{
    CardName, CardPick, CatalogCounts, CatalogEntry, CatalogIndex, FeaturedSlot, Format, Game,
    PrintingKeys, Section, format_id, name_key,
};
use deckhand_domain::events::EventRecord;
use deckhand_domain::formats::{
    CardFacts, CardTextRules, Legality, LegalityChange, recorded_at, seeds,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::Store;

/// One game's cards and printings, and the index of them that lookups read: built again, when
/// next read, after every change.
#[derive(Debug, Default)]
struct GameCatalog {
    cards: HashMap<Uuid, CardName>,
    /// Each card's name, type line and colour identity, as its last imported entry said.
    card_details: HashMap<Uuid, (String, String, Vec<String>)>,
    /// Each card's legality history by format, oldest first (as `card_legalities`).
    legalities: HashMap<Uuid, BTreeMap<String, Vec<LegalityChange>>>,
    printings: HashMap<Uuid, CatalogEntry>,
    index: Option<Arc<CatalogIndex>>,
}

/// Records `status` from `from` in a history kept oldest first, replacing a record of the
/// same time.
fn record(history: &mut Vec<LegalityChange>, from: OffsetDateTime, status: Legality) {
    history.retain(|change| change.from != from);
    let at = history.partition_point(|change| change.from < from);
    history.insert(at, LegalityChange::recorded(from, status));
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
        self.card_details.insert(
            card_id,
            (
                entry.printing.name.clone(),
                entry.printing.type_line.clone(),
                entry.color_identity.clone(),
            ),
        );
        // Rules text is an import's input, stored by name (`Tables::text_rules`), not read back.
        let stored = CatalogEntry {
            text_rules: None,
            ..entry.clone()
        };
        self.printings.insert(entry.printing.variant_id, stored);
        self.index = None;
    }

    /// Records each legality of `entry` in `formats` that differs from the one in force at
    /// `at` (the file's day), announced changes of its name (`announced`) included.
    fn record_legalities(
        &mut self,
        entry: &CatalogEntry,
        formats: &[Format],
        at: OffsetDateTime,
        announced: &[AnnouncedChange],
    ) {
        let history = self.legalities.entry(entry.printing.card_id).or_default();
        let whole = merge_announced(history, announced);
        for format in formats {
            let Some(status) = entry
                .legalities
                .get(&format.slug)
                .and_then(|status| Legality::parse(status))
            else {
                continue;
            };
            let in_force = whole
                .get(&format.slug)
                .and_then(|changes| recorded_at(changes, at));
            if in_force != Some(status) {
                record(history.entry(format.slug.clone()).or_default(), at, status);
            }
        }
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
    games: Vec<(Arc<Game>, Arc<[Format]>)>,
    catalogs: HashMap<String, GameCatalog>,
    /// Deck-building clauses of rules text by game and name key (as `card_text_rules`).
    text_rules: HashMap<(String, String), CardTextRules>,
    /// The shipped legality history by game and name key (as `legality_announcements`).
    announcements: HashMap<String, BTreeMap<String, Vec<AnnouncedChange>>>,
}

impl Default for Tables {
    /// The rows `migrations/2026-11-21-000100_catalog` (and `2026-11-28-000400_fab_game`) seed;
    /// the contract suite compares them.
    fn default() -> Self {
        // Which sections fill a featured slot: `2026-11-28-000600_featured_sections`.
        let section = |key: &str, label: &str, counted: bool| Section {
            key: key.into(),
            label: label.into(),
            counted,
            featured_slot: match key {
                "commander" => Some(FeaturedSlot::Commander),
                "companion" => Some(FeaturedSlot::Companion),
                "hero" => Some(FeaturedSlot::Hero),
                _ => None,
            },
        };
        let formats = |game: &str, list: &[(&str, &str)]| -> Arc<[Format]> {
            list.iter()
                .map(|(slug, name)| Format {
                    id: format_id(game, slug),
                    slug: (*slug).into(),
                    name: (*name).into(),
                    // As `2026-11-26-000100_format_checks` and `2026-11-28-000500_fab_rules`.
                    rules: seeds::format_rules(game, slug),
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
        // `migrations/2026-11-28-000400_fab_game`.
        let fab = Game {
            slug: "fab".into(),
            name: "Flesh and Blood".into(),
            sections: vec![
                section("hero", "Hero", true),
                section("arena", "Arena", true),
                section("deck", "Deck", true),
                section("inventory", "Inventory", true),
                section("maybeboard", "Maybeboard", false),
            ],
            colors: strings(&["red", "yellow", "blue"]),
        };
        Self {
            games: vec![
                (
                    mtg.into(),
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
                    lorcana.into(),
                    formats(
                        "lorcana",
                        &[
                            ("core", "Core Constructed"),
                            ("infinity", "Infinity Constructed"),
                        ],
                    ),
                ),
                (
                    fab.into(),
                    formats(
                        "fab",
                        &[
                            ("cc", "Classic Constructed"),
                            ("blitz", "Blitz"),
                            ("living-legend", "Living Legend"),
                            ("silver-age", "Silver Age"),
                            ("ultimate-pit-fight", "Ultimate Pit Fight"),
                            ("open", "Open"),
                        ],
                    ),
                ),
            ],
            catalogs: HashMap::new(),
            text_rules: seeds::mtg_text_rules()
                .into_iter()
                .map(|(name, rules)| (("mtg".to_owned(), name_key(name)), rules))
                .collect(),
            announcements: HashMap::from([("mtg".to_owned(), announcements_by_name("mtg"))]),
        }
    }
}

impl Tables {
    /// The game with this slug, as the decks' card search reads its sections.
    pub(crate) fn game(&self, slug: &str) -> Option<&Game> {
        self.game_and_formats(slug).map(|(game, _)| &**game)
    }

    /// The game with this slug and its formats.
    fn game_and_formats(&self, slug: &str) -> Option<&(Arc<Game>, Arc<[Format]>)> {
        self.games.iter().find(|(game, _)| game.slug == slug)
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
            .map(|(game, _)| Game::clone(game))
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = slug))]
    async fn game(&self, slug: &str) -> anyhow::Result<Option<Arc<Game>>> {
        let state = self.0.lock();
        Ok(state
            .catalog
            .game_and_formats(slug)
            .map(|(game, _)| game.clone()))
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn formats(&self, game: &str) -> anyhow::Result<Arc<[Format]>> {
        let state = self.0.lock();
        Ok(state
            .catalog
            .game_and_formats(game)
            .map(|(_, formats)| formats.clone())
            .unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, entries = entries.len()))]
    async fn store_entries(&self, game: &str, entries: &[CatalogEntry]) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        let tables = &mut state.catalog;
        // Like the foreign key in PostgreSQL.
        anyhow::ensure!(
            tables.games.iter().any(|(known, _)| known.slug == game),
            "no game {game:?}"
        );
        let catalog = tables.catalogs.entry(game.to_owned()).or_default();
        // The last entry of each card speaks for it, as in PostgreSQL.
        let mut last: HashMap<Uuid, &CatalogEntry> = HashMap::new();
        for entry in entries {
            catalog.upsert(entry);
            last.insert(entry.printing.card_id, entry);
        }
        for entry in last.values() {
            if let Some(rules) = &entry.text_rules {
                let key = (game.to_owned(), name_key(&entry.printing.name));
                if rules.is_default() {
                    tables.text_rules.remove(&key);
                } else {
                    tables.text_rules.insert(key, rules.clone());
                }
            }
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game, entries = entries.len()))]
    async fn record_imported_legalities(
        &self,
        game: &str,
        entries: &[CatalogEntry],
        imported_at: OffsetDateTime,
    ) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        let tables = &mut state.catalog;
        // Like the foreign keys in PostgreSQL.
        let formats = tables
            .game_and_formats(game)
            .map(|(_, formats)| formats.clone())
            .ok_or_else(|| anyhow::anyhow!("no game {game:?}"))?;
        let catalog = tables.catalogs.entry(game.to_owned()).or_default();
        let announced = tables.announcements.get(game);
        let speaking = CatalogEntry::speaking_for_legality(entries, imported_at);
        if let Some(missing) = speaking
            .iter()
            .find(|entry| !catalog.cards.contains_key(&entry.printing.card_id))
        {
            anyhow::bail!("card {} is not stored", missing.printing.card_id);
        }
        for entry in speaking {
            let changes = announced
                .and_then(|by_name| by_name.get(&name_key(&entry.printing.name)))
                .map_or(&[][..], Vec::as_slice);
            catalog.record_legalities(entry, &formats, imported_at, changes);
        }
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn card_facts(
        &self,
        game: &str,
        card_ids: &[Uuid],
    ) -> anyhow::Result<Vec<Arc<CardFacts>>> {
        let state = self.0.lock();
        let tables = &state.catalog;
        let Some(catalog) = tables.catalogs.get(game) else {
            return Ok(Vec::new());
        };
        Ok(card_ids
            .iter()
            .filter_map(|card_id| {
                let card = catalog.cards.get(card_id)?;
                let (name, type_line, color_identity) = catalog.card_details.get(card_id)?;
                Some(Arc::new(CardFacts {
                    card_id: *card_id,
                    name: name.clone(),
                    type_line: type_line.clone(),
                    color_identity: color_identity.clone(),
                    text: tables
                        .text_rules
                        .get(&(game.to_owned(), card.name_key.clone()))
                        .cloned()
                        .unwrap_or_default(),
                    legalities: Arc::new(merge_announced(
                        catalog.legalities.get(card_id).unwrap_or(&BTreeMap::new()),
                        tables
                            .announcements
                            .get(game)
                            .and_then(|by_name| by_name.get(&card.name_key))
                            .map_or(&[][..], Vec::as_slice),
                    )),
                }))
            })
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all, fields(game = game))]
    async fn record_legality(
        &self,
        game: &str,
        card_id: Uuid,
        format: &str,
        status: Legality,
        from: OffsetDateTime,
    ) -> anyhow::Result<()> {
        let mut state = self.0.lock();
        let tables = &mut state.catalog;
        // Like the foreign keys in PostgreSQL.
        anyhow::ensure!(
            tables
                .games
                .iter()
                .any(|(known, formats)| known.slug == game
                    && formats.iter().any(|known| known.slug == format)),
            "no format {format:?} of game {game:?}"
        );
        let catalog = tables
            .catalogs
            .get_mut(game)
            .filter(|catalog| catalog.cards.contains_key(&card_id))
            .ok_or_else(|| anyhow::anyhow!("no card {card_id} in game {game:?}"))?;
        let history = catalog.legalities.entry(card_id).or_default();
        record(history.entry(format.to_owned()).or_default(), from, status);
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record_import(&self, event: &EventRecord) -> anyhow::Result<()> {
        self.0.lock().events.record(event);
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
