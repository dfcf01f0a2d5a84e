//! A card's statistics (the domain's `card_search::CardUsage`) over PostgreSQL: gathered by one
//! statement from the counted cards each deck keeps (`decks.card_ids`, `decks.card_copies`,
//! served by the GIN index `decks_card_ids`) and kept in `card_stats`, which every instance
//! reads, so all answer the same figures (docs/adr/0003-card-search-and-stats.md).
//!
//! A request reads the row. Gathered less than [`REFRESH_AFTER`] ago, it is the answer. Older,
//! but within the contract's `STATS_MAX_AGE`, it is still the answer and this instance gathers
//! it again in the background. Missing or older than that, the request awaits a gathering.
//!
//! However many ask at once, a row costs one gathering. Within an instance, every request that
//! needs a row gathered awaits the one task obtaining it ([`CardStatistics`]); the others send
//! nothing while it runs. Across instances, a gathering runs only under the row's advisory lock
//! and only while no one gathered it within [`REFRESH_AFTER`], so one instance gathers and each
//! other instance's one task reads what it wrote. A card read steadily is gathered about twice
//! a minute, by one instance, and no request of it waits for a gathering.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration as StdDuration;

use anyhow::Context as _;
use deckhand_domain::decks::card_search::{
    CardStatsQuery, CardUsage, PLAYED_WITH_CANDIDATES, STATS_MAX_AGE,
};
use deckhand_domain::error::StoreUnavailable;
use deckhand_domain::readable::Reach;
use diesel::QueryableByName;
use diesel::sql_types::{Double, Int8, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Shared};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::rules::readable_sql;
use crate::statement::{Bind, Statement};

/// A row younger than this is the answer as it is; an older one is gathered again.
pub(crate) const REFRESH_AFTER: Duration = Duration::seconds(30);

/// How long an instance waits for another instance's gathering of a row, polling every
/// [`POLL`], before its requests report the store unavailable.
const WAIT_FOR_GATHERING: StdDuration = StdDuration::from_secs(10);
const POLL: StdDuration = StdDuration::from_millis(50);

/// The row of a query: the nil UUID stands for "every format".
fn binds(query: &CardStatsQuery) -> Vec<Bind> {
    vec![
        Bind::Text(query.game.clone()),
        Bind::Uuid(query.card),
        Bind::Uuid(query.format.unwrap_or(Uuid::nil())),
        Bind::OptionalUuid(query.format),
    ]
}

const READ: &str = "SELECT decks, all_decks, copies, played_with::text AS played_with, \
     computed_at, extract(epoch FROM now() - computed_at)::float8 AS age_seconds \
     FROM card_stats WHERE game = $1 AND card_id = $2 AND format_id = $3";

/// The gathering of one row, as one statement: under the row's advisory lock (tried, never
/// waited for) and only when no one gathered it within [`REFRESH_AFTER`]; else it writes and
/// returns nothing. The decks are those anyone may find in a list (the read rule for
/// anonymous), of the format when `$4` is one. A deck holds each card once in `card_ids`, so
/// its copies are read at the card's position (unnesting every deck's pairs for them took a
/// quarter of the gathering: docs/benchmarks.md).
fn gather_sql() -> String {
    let readable = readable_sql("d", Reach::Listed, None);
    let refresh = REFRESH_AFTER.whole_seconds();
    let last_candidate = PLAYED_WITH_CANDIDATES - 1;
    format!(
        "WITH gate AS (
            SELECT pg_try_advisory_xact_lock(
                       hashtextextended('card_stats/' || $1 || '/' || $2 || '/' || $3, 0))
                   AND NOT EXISTS (
                       SELECT 1 FROM card_stats c
                       WHERE c.game = $1 AND c.card_id = $2 AND c.format_id = $3
                         AND c.computed_at > now() - interval '{refresh} seconds') AS open
        ), holding AS MATERIALIZED (
            SELECT d.card_ids, d.card_copies FROM decks d
            WHERE d.game = $1 AND d.card_ids @> ARRAY[$2::uuid] AND {readable}
              AND ($4::uuid IS NULL OR d.format_id = $4)
        ), together AS MATERIALIZED (
            SELECT other.card_id, count(*) AS decks
            FROM holding h CROSS JOIN LATERAL unnest(h.card_ids) AS other(card_id)
            WHERE other.card_id <> $2
            GROUP BY other.card_id
        ), candidates AS (
            SELECT card_id, decks FROM together
            WHERE decks >= coalesce((SELECT decks FROM together
                                     ORDER BY decks DESC OFFSET {last_candidate} LIMIT 1), 0)
        )
        INSERT INTO card_stats AS c
            (game, card_id, format_id, decks, all_decks, copies, played_with, computed_at)
        SELECT $1, $2, $3,
               (SELECT count(*) FROM holding),
               (SELECT count(*) FROM decks d
                WHERE d.game = $1 AND {readable} AND ($4::uuid IS NULL OR d.format_id = $4)),
               (SELECT coalesce(sum(h.card_copies[array_position(h.card_ids, $2::uuid)]), 0)
                FROM holding h),
               (SELECT coalesce(json_agg(json_build_array(card_id, decks)
                                         ORDER BY decks DESC, card_id), '[]')
                FROM candidates),
               now()
        WHERE (SELECT open FROM gate)
        ON CONFLICT (game, card_id, format_id) DO UPDATE SET
            decks = EXCLUDED.decks, all_decks = EXCLUDED.all_decks, copies = EXCLUDED.copies,
            played_with = EXCLUDED.played_with, computed_at = EXCLUDED.computed_at
        WHERE c.computed_at < EXCLUDED.computed_at
        RETURNING decks, all_decks, copies, played_with::text AS played_with, computed_at,
                  0::float8 AS age_seconds"
    )
}

#[derive(QueryableByName)]
struct StatsRow {
    #[diesel(sql_type = Int8)]
    decks: i64,
    #[diesel(sql_type = Int8)]
    all_decks: i64,
    #[diesel(sql_type = Int8)]
    copies: i64,
    #[diesel(sql_type = Text)]
    played_with: String,
    #[diesel(sql_type = Timestamptz)]
    computed_at: OffsetDateTime,
    #[diesel(sql_type = Double)]
    age_seconds: f64,
}

impl StatsRow {
    fn age(&self) -> Duration {
        Duration::seconds_f64(self.age_seconds.max(0.0))
    }

    fn into_usage(self) -> anyhow::Result<CardUsage> {
        let played_with: Vec<(Uuid, i64)> = serde_json::from_str(&self.played_with)
            .context("card_stats.played_with is not a list of [card id, decks]")?;
        let count = |value: i64| u64::try_from(value).unwrap_or(0);
        Ok(CardUsage {
            decks: count(self.decks),
            all_decks: count(self.all_decks),
            copies: count(self.copies),
            played_with: played_with
                .into_iter()
                .map(|(id, decks)| (id, count(decks)))
                .collect(),
            as_of: self.computed_at,
        })
    }
}

/// The card statistics of one store: the rows this instance is obtaining, each by one task
/// that every request needing it awaits.
#[derive(Clone, Default)]
pub(crate) struct CardStatistics {
    under_way: Arc<Mutex<HashMap<CardStatsQuery, Obtaining>>>,
}

/// A row being obtained ([`obtain`]): a task of its own, so it finishes even when the requests
/// awaiting it go away, shared by all of them.
type Obtaining = Shared<BoxFuture<'static, Result<CardUsage, Arc<anyhow::Error>>>>;

impl CardStatistics {
    pub(crate) async fn usage(
        &self,
        pool: &Pool,
        query: &CardStatsQuery,
    ) -> anyhow::Result<CardUsage> {
        if let Some(row) = read(pool, query).await? {
            let age = row.age();
            if age < REFRESH_AFTER {
                return row.into_usage();
            }
            if age < STATS_MAX_AGE {
                // Gathered again in the background; this request answers from the row.
                drop(self.obtaining(pool, query));
                return row.into_usage();
            }
        }
        self.obtaining(pool, query)
            .await
            .map_err(|failure| error::shared(&failure))
    }

    /// The task obtaining `query`'s row: the one under way, or a new one.
    fn obtaining(&self, pool: &Pool, query: &CardStatsQuery) -> Obtaining {
        let mut under_way = lock(&self.under_way);
        if let Some(obtaining) = under_way.get(query) {
            return obtaining.clone();
        }
        let task = tokio::spawn({
            let (pool, query) = (pool.clone(), query.clone());
            let under_way = Arc::clone(&self.under_way);
            async move {
                let obtained = obtain(&pool, &query).await;
                if let Err(error) = &obtained {
                    tracing::warn!(error = %format!("{error:#}"), card = %query.card, "obtaining a card's statistics failed");
                }
                // Removed under the lock the task was inserted under, so never before it.
                lock(&under_way).remove(&query);
                obtained
            }
        });
        let obtaining = async move {
            match task.await {
                Ok(obtained) => obtained.map_err(Arc::new),
                Err(stopped) => Err(Arc::new(anyhow::Error::new(stopped))),
            }
        }
        .boxed()
        .shared();
        under_way.insert(query.clone(), obtaining.clone());
        obtaining
    }
}

/// The row of `query` fit to answer: gathered now, or, while another instance holds its lock,
/// read once that instance has written it.
async fn obtain(pool: &Pool, query: &CardStatsQuery) -> anyhow::Result<CardUsage> {
    let deadline = tokio::time::Instant::now() + WAIT_FOR_GATHERING;
    loop {
        if let Some(row) = gather(pool, query).await? {
            return row.into_usage();
        }
        // Another instance holds the row's lock, or just gathered it.
        if let Some(row) = read(pool, query).await?
            && row.age() < REFRESH_AFTER
        {
            return row.into_usage();
        }
        if tokio::time::Instant::now() > deadline {
            return Err(anyhow::Error::new(StoreUnavailable)
                .context("waiting for another instance's gathering of a card's statistics"));
        }
        tokio::time::sleep(POLL).await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn read(pool: &Pool, query: &CardStatsQuery) -> anyhow::Result<Option<StatsRow>> {
    let mut conn = checkout(pool).await?;
    let rows: Vec<StatsRow> = Statement::new(READ, binds(query))
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("reading a card's statistics")?;
    Ok(rows.into_iter().next())
}

async fn gather(pool: &Pool, query: &CardStatsQuery) -> anyhow::Result<Option<StatsRow>> {
    static GATHER: LazyLock<String> = LazyLock::new(gather_sql);
    let mut conn = checkout(pool).await?;
    let rows: Vec<StatsRow> = Statement::new(GATHER.as_str(), binds(query))
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("gathering a card's statistics")?;
    Ok(rows.into_iter().next())
}
