//! Games, their sections and formats, and each game's cards and printings, held in process.
//! Every game-scoped request needs the games, and a resolution of 1000 identifiers needed about
//! 1,900 index probes of the card tables (docs/benchmarks.md); both change only when an
//! operator changes the data (a migration, a catalog import).
//!
//! Refreshed by LISTEN/NOTIFY: statement triggers on `games`, `game_sections`, `formats`
//! (migration `2026-11-23-000900_catalog_notify`), `catalog_cards` and `catalog_printings`
//! (`2026-11-24-000100_catalog_cards_notify`) notify `deckhand_catalog` on every change, and
//! each instance keeps one connection listening, so every instance drops its copy when the
//! change commits, at no cost per request; an import through this instance drops it at once.
//! A version column checked per request would cost the round trip the cache saves, and a time
//! to live would serve stale data for that long. Whenever the listener is not connected (at
//! start, after PostgreSQL restarts) nothing is cached: games are read per request and card
//! lookups go to the database's indexes, so a missed notification cannot leave a stale copy.
//!
//! A game's card index is loaded on first use after a change (the 2019 catalog: 45,558
//! printings, read and indexed in about half a second), one load at a time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::catalog::{CatalogIndex, Format, Game};
use deckhand_domain::formats::CardFacts;
use diesel_async::RunQueryDsl;
use uuid::Uuid;

use super::facts::{FORMATS_WITH_RULES, FormatRulesRow, load_facts};
use super::{load_games, load_index};
use crate::error;
use crate::listener::{self, Invalidate, Listener};
use crate::pool::{POOL_TIMEOUT, Pool, checkout};
use crate::statement::Statement;

/// Every card's deck-building facts of one game, by card id, each shared with the requests that
/// read it.
pub(super) type Facts = HashMap<Uuid, Arc<CardFacts>>;

/// The channel the triggers notify.
const CHANNEL: &str = "deckhand_catalog";

/// Every game with its sections, and every game's formats, as one consistent copy.
#[derive(Debug)]
pub(super) struct Snapshot {
    pub(super) games: Vec<Arc<Game>>,
    pub(super) formats: HashMap<String, Arc<[Format]>>,
}

#[derive(Debug, Default)]
struct State {
    /// Bumped by every invalidation, so a load that raced one is not kept.
    generation: u64,
    /// Whether the listener is connected: only then is a copy trustworthy.
    listening: bool,
    snapshot: Option<Arc<Snapshot>>,
    /// Each game's card index, by slug.
    indexes: HashMap<String, Arc<CatalogIndex>>,
    /// Each game's card facts, by slug.
    facts: HashMap<String, Arc<Facts>>,
}

pub(super) struct CatalogCache {
    pool: Pool,
    /// The repositories' listening connection; none on a replica, where nothing is kept.
    listen: Option<Listener>,
    state: Mutex<State>,
    listener: OnceLock<()>,
    /// Held while a card index loads, so that requests arriving meanwhile wait for it rather
    /// than each load the whole catalog.
    loading: tokio::sync::Mutex<()>,
}

impl CatalogCache {
    pub(super) fn new(pool: Pool, listen: Listener) -> Arc<Self> {
        Self::with(pool, Some(listen))
    }

    fn with(pool: Pool, listen: Option<Listener>) -> Arc<Self> {
        Arc::new(Self {
            pool,
            listen,
            state: Mutex::new(State::default()),
            listener: OnceLock::new(),
            loading: tokio::sync::Mutex::new(()),
        })
    }

    /// A cache that never listens, so never keeps a copy: every read goes to `pool`.
    pub(super) fn never_listening(pool: Pool) -> Arc<Self> {
        // Never subscribed, so `listening` stays false.
        Self::with(pool, None)
    }

    fn start_listening(self: &Arc<Self>) {
        self.listener.get_or_init(|| {
            if let Some(listen) = &self.listen {
                listen.subscribe(CHANNEL, Arc::downgrade(self) as Weak<Self>);
            }
        });
    }

    /// Waits for the listener to connect, for at most [`POOL_TIMEOUT`].
    pub(super) async fn wait_until_listening(self: &Arc<Self>) -> anyhow::Result<()> {
        self.start_listening();
        let deadline = tokio::time::Instant::now() + POOL_TIMEOUT;
        while !self.lock().listening {
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "the catalog change listener did not connect within {POOL_TIMEOUT:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    }

    /// The current copy, loaded (three statements on one connection) when there is none.
    pub(super) async fn snapshot(self: &Arc<Self>) -> anyhow::Result<Arc<Snapshot>> {
        self.start_listening();
        let generation = {
            let state = self.lock();
            match &state.snapshot {
                Some(snapshot) if state.listening => return Ok(snapshot.clone()),
                _ => state.generation,
            }
        };
        let loaded = Arc::new(self.read_tables().await?);
        let mut state = self.lock();
        if state.listening && state.generation == generation {
            state.snapshot = Some(loaded.clone());
        }
        Ok(loaded)
    }

    /// The card index of `game`, loaded when there is none; `None` while the listener is not
    /// connected, when the caller asks the database instead.
    pub(super) async fn index(
        self: &Arc<Self>,
        game: &str,
    ) -> anyhow::Result<Option<Arc<CatalogIndex>>> {
        self.start_listening();
        if let Lookup::Settled(index) = self.lookup(game) {
            return Ok(index);
        }
        let _one_load = self.loading.lock().await;
        // Another request may have loaded it while this one waited.
        let generation = match self.lookup(game) {
            Lookup::Settled(index) => return Ok(index),
            Lookup::Load { generation } => generation,
        };
        let mut conn = checkout(&self.pool).await?;
        let loaded = Arc::new(load_index(&mut conn, game).await?);
        drop(conn);
        tracing::debug!(
            game,
            cards = loaded.cards(),
            printings = loaded.printings(),
            "card index loaded"
        );
        let mut state = self.lock();
        if state.listening && state.generation == generation {
            state.indexes.insert(game.to_owned(), loaded.clone());
        }
        Ok(Some(loaded))
    }

    /// The card facts of `game` (format checks), loaded when there are none, as
    /// [`Self::index`] does; `None` while the listener is not connected.
    pub(super) async fn facts(self: &Arc<Self>, game: &str) -> anyhow::Result<Option<Arc<Facts>>> {
        self.start_listening();
        let lookup = |cache: &Self| {
            let state = cache.lock();
            match state.facts.get(game) {
                _ if !state.listening => Err(None),
                Some(facts) => Err(Some(facts.clone())),
                None => Ok(state.generation),
            }
        };
        if let Err(settled) = lookup(self) {
            return Ok(settled);
        }
        let _one_load = self.loading.lock().await;
        let generation = match lookup(self) {
            Err(settled) => return Ok(settled),
            Ok(generation) => generation,
        };
        let mut conn = checkout(&self.pool).await?;
        let loaded = Arc::new(load_facts(&mut conn, game).await?);
        drop(conn);
        tracing::debug!(game, cards = loaded.len(), "card facts loaded");
        let mut state = self.lock();
        if state.listening && state.generation == generation {
            state.facts.insert(game.to_owned(), loaded.clone());
        }
        Ok(Some(loaded))
    }

    fn lookup(&self, game: &str) -> Lookup {
        let state = self.lock();
        match state.indexes.get(game) {
            _ if !state.listening => Lookup::Settled(None),
            Some(index) => Lookup::Settled(Some(index.clone())),
            None => Lookup::Load {
                generation: state.generation,
            },
        }
    }

    /// Drops every copy after this instance changed the catalog, without waiting for the
    /// notification.
    pub(super) fn forget(&self) {
        self.lock().clear();
    }

    async fn read_tables(&self) -> anyhow::Result<Snapshot> {
        let mut conn = checkout(&self.pool).await?;
        let games = load_games(&mut conn)
            .await
            .map_err(error::query)
            .context("loading games")?;
        let rows: Vec<FormatRulesRow> = Statement::new(FORMATS_WITH_RULES, Vec::new())
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("loading formats")?;
        let mut formats: HashMap<String, Vec<Format>> = HashMap::new();
        for row in rows {
            let rules = row.rules();
            formats.entry(row.game).or_default().push(Format {
                id: row.id,
                slug: row.slug,
                name: row.name,
                rules,
            });
        }
        let formats = formats
            .into_iter()
            .map(|(game, formats)| (game, Arc::from(formats)))
            .collect();
        let games = games.into_iter().map(Arc::new).collect();
        Ok(Snapshot { games, formats })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        listener::lock_state(&self.state)
    }
}

impl Invalidate for CatalogCache {
    fn invalidate(&self, listening: bool) {
        let mut state = self.lock();
        state.clear();
        state.listening = listening;
    }
}

impl State {
    fn clear(&mut self) {
        self.generation += 1;
        self.snapshot = None;
        self.indexes.clear();
        self.facts.clear();
    }
}

/// What to do for a game's card index.
enum Lookup {
    /// Use this one; `None` while the listener is not connected (no copy can be trusted).
    Settled(Option<Arc<CatalogIndex>>),
    /// Load it, keeping it if nothing changed since `generation`.
    Load { generation: u64 },
}
