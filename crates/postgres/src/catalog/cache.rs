//! Games, their sections and formats, held in process: every game-scoped request needs them
//! and they change only when an operator changes the data (a migration), so reading them per
//! request cost two or three statements for nothing.
//!
//! Refreshed by LISTEN/NOTIFY: statement triggers on `games`, `game_sections` and `formats`
//! (migration `2026-11-23-000900_catalog_notify`) notify `deckhand_catalog` on every change, and
//! each instance keeps one connection listening, so every instance drops its copy when the
//! change commits, at no cost per request. A version column checked per request would cost the
//! round trip the cache saves, and a time to live would serve stale games for that long.
//! Whenever the listener is not connected (at start, after PostgreSQL restarts) nothing is
//! cached and every read goes to the database, so a missed notification cannot leave a stale
//! copy behind.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::catalog::{Format, Game};
use diesel::prelude::*;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt as _;

use super::{FormatRow, load_games};
use crate::error;
use crate::pool::{Pool, checkout};
use crate::schema::formats;

/// The channel the triggers notify.
const CHANNEL: &str = "deckhand_catalog";
/// How long the listener waits before connecting again after losing its connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// Every game with its sections, and every game's formats, as one consistent copy.
#[derive(Debug)]
pub(super) struct Snapshot {
    pub(super) games: Vec<Game>,
    pub(super) formats: HashMap<String, Vec<Format>>,
}

#[derive(Debug, Default)]
struct State {
    /// Bumped by every invalidation, so a load that raced one is not kept.
    generation: u64,
    /// Whether the listener is connected: only then is a copy trustworthy.
    listening: bool,
    snapshot: Option<Arc<Snapshot>>,
}

pub(super) struct CatalogCache {
    pool: Pool,
    state: Mutex<State>,
    listener: OnceLock<()>,
}

impl CatalogCache {
    pub(super) fn new(pool: Pool) -> Arc<Self> {
        Arc::new(Self {
            pool,
            state: Mutex::new(State::default()),
            listener: OnceLock::new(),
        })
    }

    /// The current copy, loaded (three statements on one connection) when there is none.
    pub(super) async fn snapshot(self: &Arc<Self>) -> anyhow::Result<Arc<Snapshot>> {
        self.listener.get_or_init(|| {
            tokio::spawn(listen(Arc::downgrade(self), self.pool.clone()));
        });
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

    async fn read_tables(&self) -> anyhow::Result<Snapshot> {
        let mut conn = checkout(&self.pool).await?;
        let games = load_games(&mut conn)
            .await
            .map_err(error::query)
            .context("loading games")?;
        let rows: Vec<(String, FormatRow)> = formats::table
            .order((formats::game, formats::position))
            .select((formats::game, FormatRow::as_select()))
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("loading formats")?;
        let mut formats: HashMap<String, Vec<Format>> = HashMap::new();
        for (game, row) in rows {
            formats.entry(game).or_default().push(row.into());
        }
        Ok(Snapshot { games, formats })
    }

    fn invalidate(&self, listening: bool) {
        let mut state = self.lock();
        state.generation += 1;
        state.listening = listening;
        state.snapshot = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is always consistent between statements, so a poisoned lock is usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Listens for changes for as long as the cache lives, reconnecting after failures.
async fn listen(cache: Weak<CatalogCache>, pool: Pool) {
    loop {
        let outcome = listen_once(&cache, &pool).await;
        let Some(live) = cache.upgrade() else { return };
        live.invalidate(false);
        drop(live);
        if let Err(error) = outcome {
            tracing::warn!(error = %format!("{error:#}"), "catalog change listener lost; games are read uncached until it reconnects");
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

/// One listening connection, until it fails or the cache is gone.
async fn listen_once(cache: &Weak<CatalogCache>, pool: &Pool) -> anyhow::Result<()> {
    // Taken out of the pool for good: it stays busy listening.
    let mut conn: AsyncPgConnection = Object::take(checkout(pool).await?);
    diesel::sql_query(format!("LISTEN {CHANNEL}"))
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .context("listening for catalog changes")?;
    // From here on every change is heard; anything cached before may be stale.
    match cache.upgrade() {
        Some(live) => live.invalidate(true),
        None => return Ok(()),
    }
    let mut notifications = pin!(conn.notifications_stream());
    while let Some(notification) = notifications.next().await {
        notification
            .map_err(error::query)
            .context("receiving catalog changes")?;
        match cache.upgrade() {
            Some(live) => live.invalidate(true),
            None => return Ok(()),
        }
    }
    Ok(())
}
