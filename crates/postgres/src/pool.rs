//! The connection pool: how connections are made, checked and timed out.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use deadpool::Status;
use deadpool::managed::{HookError, HookFuture, Metrics, TimeoutType, Timeouts};

use diesel::connection::CacheSize;
use diesel::sql_types::Text;
use diesel::{ConnectionError, ConnectionResult, QueryableByName};
use diesel_async::pooled_connection::deadpool::{Hook, Object, PoolError};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use crate::{ended_sessions, error};

/// One deadpool pool: a shard of a [`Pool`].
type Shard = diesel_async::pooled_connection::deadpool::Pool<AsyncPgConnection>;

/// A pool of PostgreSQL connections, in one shard per core (the HTTP server's default number
/// of workers) and, when it has a connection to spare, one for the threads set apart from the
/// workers ([`set_this_thread_apart`]).
///
/// A connection's protocol is driven by a task on the thread that made it. Each HTTP worker
/// is a thread of its own, so a statement sent on a connection made by another thread crosses
/// threads twice (the statement out, the rows back), each a wake-up of the other thread. Kept
/// on their thread, a deck detail's statement costs the server a sixth less CPU and the deck
/// list serves a fifth to four fifths more requests a second on two cores (docs/benchmarks.md,
/// "Connections kept on their worker"). A thread therefore has a home shard, takes an idle
/// connection from it first, and makes new connections there. A caller who finds none idle
/// and no room waits in its home shard's queue (in a busy pool, most statements then stay on
/// their thread) for [`HOME_WAIT`] at most. Then the shards share their capacity: an idle
/// connection of any shard is lent (never made in another shard just to be lent), else the
/// caller waits on every shard, where it may make one. Threads set apart (the one that starts
/// the server and runs its listeners and background tasks) make theirs in a shard of their
/// own, so that no worker's connection is driven by a thread busy with other work.
#[derive(Clone)]
pub struct Pool {
    /// The workers' shards, then the shard of the threads set apart when there is one.
    shards: Arc<[Shard]>,
    /// Whether the last shard is for the threads set apart.
    has_apart_shard: bool,
    /// Callers waiting for a connection (one may wait on several shards at once).
    waiting: Arc<AtomicUsize>,
}

/// How long a caller who found no idle connection waits for one of its home shard before it
/// waits for any shard's: far longer than a queue of short statements takes to move, far
/// shorter than [`POOL_TIMEOUT`], so that a shard held by slow statements delays the callers
/// homed on it by this much at most while other shards' connections come free.
pub const HOME_WAIT: Duration = Duration::from_millis(20);

/// One caller counted among a pool's waiting callers while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn counted_in(waiting: &'a AtomicUsize) -> Self {
        waiting.fetch_add(1, Ordering::Relaxed);
        Self(waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `shard`'s own timeouts with `wait` for a free connection.
fn waiting(shard: &Shard, wait: Duration) -> Timeouts {
    Timeouts {
        wait: Some(wait),
        ..shard.timeouts()
    }
}

/// Where a thread takes its connections from.
#[derive(Debug, Clone, Copy)]
enum Home {
    /// Not yet asked.
    Unknown,
    /// The `n`th thread to check a connection out: shard `n` modulo the workers' shards.
    Numbered(usize),
    /// Set apart from the HTTP workers: the shard of such threads, where a pool has one.
    Apart,
}

thread_local! {
    /// This thread's home shard, numbered on its first checkout unless set apart before it.
    static HOME: Cell<Home> = const { Cell::new(Home::Unknown) };
}

/// The numbers handed to threads as they first check a connection out.
static THREADS_SEEN: AtomicUsize = AtomicUsize::new(0);

/// Sets the calling thread apart from the HTTP workers (`deckhand serve` calls it on the thread
/// that starts the server and runs its background tasks: listeners, pruning, webhook
/// deliveries): the connections it makes go to a shard of their own, so that no worker's
/// statements travel through a thread that is busy with other work. Call it before the
/// thread's first checkout; a thread set apart stays so.
pub fn set_this_thread_apart() {
    HOME.set(Home::Apart);
}

tokio::task_local! {
    /// Set while a caller asks a shard that is not its home for an idle connection: no
    /// connection is made for it there ([`establish`] refuses), since it would be driven by
    /// the caller's thread for the rest of its life while serving that shard's.
    static LENDING_ONLY: ();
}

impl Pool {
    /// A pool of `shards`, no caller waiting.
    pub(crate) fn of(shards: Vec<Shard>, has_apart_shard: bool) -> Self {
        Self {
            shards: shards.into(),
            has_apart_shard,
            waiting: Arc::default(),
        }
    }

    /// A connection: an idle one of this thread's home shard or a new one there, else the first
    /// of the home shard's to come free within [`HOME_WAIT`], else an idle one of another
    /// shard, else the first of any shard's to come free (or a new one where there is room).
    /// A thread set apart takes an idle one of a worker's shard before it waits at home, and
    /// never makes one elsewhere.
    pub async fn get(&self) -> Result<Object<AsyncPgConnection>, PoolError> {
        let home = self.home();
        let home_shard = &self.shards[home];
        if let Some(taken) = within(home_shard, Duration::ZERO).await {
            return taken;
        }
        let _counted = Waiting::counted_in(&self.waiting);
        let workers = &self.shards[..self.workers()];
        if home >= workers.len() {
            if let Some(lent) = lend(workers.iter()).await? {
                return Ok(lent);
            }
            return home_shard.get().await;
        }
        if workers.len() == 1 {
            return home_shard.get().await;
        }
        if let Some(taken) = within(home_shard, HOME_WAIT).await {
            return taken;
        }
        let count = self.shards.len();
        let others = (1..count).map(|step| &self.shards[(home + step) % count]);
        if let Some(lent) = lend(others).await? {
            return Ok(lent);
        }
        let waits = self.shards.iter().map(|shard| Box::pin(shard.get()));
        futures_util::future::select_all(waits).await.0
    }

    /// Each shard's sizes, connections and waiting callers, the workers' shards first, for the
    /// tests of where connections are made.
    #[doc(hidden)]
    pub fn shard_status(&self) -> Vec<Status> {
        self.shards.iter().map(Shard::status).collect()
    }

    /// The shards' sizes and connections summed, and the callers waiting.
    pub fn status(&self) -> Status {
        let empty = Status {
            max_size: 0,
            size: 0,
            available: 0,
            // Spelled out: diesel's `RunQueryDsl::load`, in scope here, takes `.load(..)`.
            waiting: AtomicUsize::load(&self.waiting, Ordering::Relaxed),
        };
        self.shards
            .iter()
            .map(Shard::status)
            .fold(empty, |sum, shard| Status {
                max_size: sum.max_size + shard.max_size,
                size: sum.size + shard.size,
                available: sum.available + shard.available,
                ..sum
            })
    }

    /// Closes every shard: waiters and later checkouts fail, connections close as they return.
    pub fn close(&self) {
        self.shards.iter().for_each(Shard::close);
    }

    /// How many shards are the workers'.
    fn workers(&self) -> usize {
        self.shards.len() - usize::from(self.has_apart_shard)
    }

    /// This thread's home shard's place in `shards`.
    fn home(&self) -> usize {
        let workers = self.workers();
        let number = match HOME.get() {
            Home::Apart if self.has_apart_shard => return workers,
            Home::Apart => 0,
            Home::Numbered(number) => number,
            Home::Unknown => {
                let number = THREADS_SEEN.fetch_add(1, Ordering::Relaxed);
                HOME.set(Home::Numbered(number));
                number
            }
        };
        number % workers
    }
}

/// `shard`'s idle connection, or a new one there, within `wait`; `None` when none came.
async fn within(
    shard: &Shard,
    wait: Duration,
) -> Option<Result<Object<AsyncPgConnection>, PoolError>> {
    match shard.timeout_get(&waiting(shard, wait)).await {
        Err(PoolError::Timeout(TimeoutType::Wait)) => None,
        taken => Some(taken),
    }
}

/// An idle connection of one of `shards`, lent to a caller homed elsewhere: none is made for it.
async fn lend<'a>(
    shards: impl Iterator<Item = &'a Shard>,
) -> Result<Option<Object<AsyncPgConnection>>, PoolError> {
    for shard in shards {
        let at_once = waiting(shard, Duration::ZERO);
        match LENDING_ONLY.scope((), shard.timeout_get(&at_once)).await {
            Ok(conn) => return Ok(Some(conn)),
            Err(PoolError::Closed) => return Err(PoolError::Closed),
            // None idle: a new one refused, or no room.
            Err(_) => {}
        }
    }
    Ok(None)
}

/// How long a call waits for a free connection, for a new one, or for the liveness check of an
/// idle one. Short, so that with PostgreSQL down a request fails fast (a 503) instead of hanging.
pub const POOL_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest any statement made through the pool may run unless the operator sets another
/// (`DECKHAND_DB_STATEMENT_TIMEOUT_MS`). No request of a public API should come near it; it
/// stops a runaway query from holding a connection indefinitely. A statement it cuts off is
/// an outage to the caller (503 with `Retry-After`, `error::query`), not a bug.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(15);

/// What stands between the pool and PostgreSQL (`DECKHAND_DB_POOLER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooler {
    /// Connections straight to PostgreSQL: each keeps its session (prepared statements, the
    /// statement timeout it sets).
    #[default]
    None,
    /// A pooler in transaction mode (PgBouncer's `pool_mode = transaction`): between
    /// transactions a connection may be served by another server session, so nothing is left
    /// on a session. Every statement is sent unnamed, in one flight with its binds (the patched
    /// diesel-async, vendor/README.md), and the statement timeout is the server's own setting,
    /// which each new connection checks ([`check_statement_timeout`]).
    Transaction,
}

/// `pre_recycle`: a connection last handed out (or made) before a session was last seen ended
/// ([`ended_sessions::seen`]) answers a `SELECT 1` first; when it cannot, deadpool drops it and hands
/// out another or makes a new one.
fn verify_if_suspect<'a>(
    conn: &'a mut AsyncPgConnection,
    metrics: &'a Metrics,
) -> HookFuture<'a, diesel_async::pooled_connection::PoolError> {
    Box::pin(async move {
        if !ended_sessions::since(metrics.recycled.unwrap_or(metrics.created)) {
            return Ok(());
        }
        match tokio::time::timeout(POOL_TIMEOUT, conn.batch_execute("SELECT 1")).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) | Err(_) => Err(HookError::message(
                "the connection's session ended; it is dropped",
            )),
        }
    })
}

/// A pool of at most `pool_size` connections to `database_url`, each with
/// [`STATEMENT_TIMEOUT`]: [`connect_with_timeout`] with the default.
pub async fn connect(database_url: &str, pool_size: usize) -> anyhow::Result<Pool> {
    connect_with_timeout(database_url, pool_size, STATEMENT_TIMEOUT).await
}

/// A pool of at most `pool_size` connections to `database_url`, each with `statement_timeout`
/// (which overrides a `statement_timeout` given in the URL's `options`).
///
/// No connection is made here, so the service can start while PostgreSQL is down and report it
/// through `StoreHealth`. A checkout costs no round trip (`RecyclingMethod::Fast`): an idle
/// connection is handed out unless it is known to be broken, which it is as soon as the server
/// closed it (a restart, `pg_terminate_backend`) or a statement on it failed at the protocol
/// level, so connections broken by a PostgreSQL restart are still replaced without restarting
/// the service. The verifying `SELECT 1` it replaces was one extra round trip per checkout;
/// it is still sent, once, to each connection that may have lost its session unseen
/// (`ended_sessions::seen`).
pub async fn connect_with_timeout(
    database_url: &str,
    pool_size: usize,
    statement_timeout: Duration,
) -> anyhow::Result<Pool> {
    connect_through(database_url, pool_size, statement_timeout, Pooler::None).await
}

/// [`connect_with_timeout`], through `pooler`, in one shard per core.
pub async fn connect_through(
    database_url: &str,
    pool_size: usize,
    statement_timeout: Duration,
    pooler: Pooler,
) -> anyhow::Result<Pool> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    sharded(database_url, pool_size, statement_timeout, pooler, cores)
}

/// [`connect`] in `shards` shards whatever the number of cores, for the tests of sharing.
#[doc(hidden)]
pub async fn connect_in_shards(
    database_url: &str,
    pool_size: usize,
    shards: usize,
) -> anyhow::Result<Pool> {
    sharded(
        database_url,
        pool_size,
        STATEMENT_TIMEOUT,
        Pooler::None,
        shards,
    )
}

fn sharded(
    database_url: &str,
    pool_size: usize,
    statement_timeout: Duration,
    pooler: Pooler,
    shards: usize,
) -> anyhow::Result<Pool> {
    anyhow::ensure!(
        !statement_timeout.is_zero(),
        "a statement timeout of 0 would turn the limit off"
    );
    let timeout_ms = statement_timeout.as_millis();
    ended_sessions::clock_start();
    let (worker_sizes, apart_size) = shard_sizes(pool_size, shards);
    let shards = worker_sizes
        .chain(apart_size)
        .map(|size| {
            let mut config = ManagerConfig::default();
            config.recycling_method = RecyclingMethod::Fast;
            config.custom_setup = Box::new(move |url| establish(url, timeout_ms, pooler));
            let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                database_url,
                config,
            );
            Shard::builder(manager)
                .max_size(size)
                .pre_recycle(Hook::async_fn(verify_if_suspect))
                .runtime(deadpool::Runtime::Tokio1)
                .wait_timeout(Some(POOL_TIMEOUT))
                .create_timeout(Some(POOL_TIMEOUT))
                .recycle_timeout(Some(POOL_TIMEOUT))
                .build()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Pool::of(shards, apart_size.is_some()))
}

/// `pool_size` connections in `shards` shards for the workers (fewer when there are fewer
/// connections), as even as they divide, and one connection in a shard of its own for the
/// threads set apart when the pool has more connections than workers' shards.
fn shard_sizes(pool_size: usize, shards: usize) -> (impl Iterator<Item = usize>, Option<usize>) {
    let shards = shards.max(1);
    let (for_workers, apart) = if pool_size > shards {
        (pool_size - 1, Some(1))
    } else {
        (pool_size, None)
    };
    let count = shards.min(for_workers.max(1));
    let sizes =
        (0..count).map(move |shard| for_workers / count + usize::from(shard < for_workers % count));
    (sizes, apart)
}

type SetupFuture<'a> =
    Pin<Box<dyn Future<Output = ConnectionResult<AsyncPgConnection>> + Send + 'a>>;

fn establish(database_url: &str, timeout_ms: u128, pooler: Pooler) -> SetupFuture<'_> {
    Box::pin(async move {
        if LENDING_ONLY.try_with(|()| ()).is_ok() {
            return Err(ConnectionError::BadConnection(
                "only an idle connection is lent from another shard".to_owned(),
            ));
        }
        let mut conn = AsyncPgConnection::establish(database_url).await?;
        match pooler {
            Pooler::None => conn
                .batch_execute(&format!(
                    "SET statement_timeout = {timeout_ms}; SET jit = off"
                ))
                .await
                .map_err(ConnectionError::CouldntSetupConfiguration)?,
            Pooler::Transaction => {
                conn.set_prepared_statement_cache_size(CacheSize::Disabled);
                check_statement_timeout(&mut conn, timeout_ms).await?;
            }
        }
        Ok(conn)
    })
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    setting: String,
}

/// Through a pooler a `SET` would stay on whichever server session ran it, so the statement
/// timeout must be the server's own (`ALTER ROLE ... SET statement_timeout`, or PgBouncer's
/// `connect_query`): a connection that finds another value is refused, with the fix in the
/// error, rather than let statements run unbounded (docs/operations.md, "Connection pooler").
async fn check_statement_timeout(
    conn: &mut AsyncPgConnection,
    timeout_ms: u128,
) -> ConnectionResult<()> {
    let found: Setting =
        diesel::sql_query("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'")
            .get_result(conn)
            .await
            .map_err(ConnectionError::CouldntSetupConfiguration)?;
    if found.setting == timeout_ms.to_string() {
        return Ok(());
    }
    Err(ConnectionError::BadConnection(format!(
        "through the connection pooler the server's statement_timeout is {} ms, not the {timeout_ms} ms \
         of DECKHAND_DB_STATEMENT_TIMEOUT_MS: set it for the role (ALTER ROLE <user> SET \
         statement_timeout = {timeout_ms}) or in PgBouncer's connect_query",
        found.setting
    )))
}

/// A connection carrying a transaction that statements of its own open and end (`BEGIN` sent
/// in one flight with the first statement, `COMMIT` with the last: `decks::saves::save_revision`),
/// unseen by diesel's transaction manager. Until [`Self::end`] records that the transaction is
/// over, a dropped guard (a request dropped midway, its client gone) closes the connection
/// instead of returning it to the pool, so PostgreSQL rolls the transaction back and frees its
/// locks.
pub(crate) struct PipelinedTransaction {
    conn: Option<Object<AsyncPgConnection>>,
    ended: bool,
}

impl PipelinedTransaction {
    /// Guards `conn`, on which the caller is about to send `BEGIN`.
    pub(crate) fn on(conn: Object<AsyncPgConnection>) -> Self {
        Self {
            conn: Some(conn),
            ended: false,
        }
    }

    /// The connection, shared so that statements can be sent together (pipelined).
    pub(crate) fn connection(&self) -> &AsyncPgConnection {
        let Some(conn) = &self.conn else {
            unreachable!("only dropping the guard takes its connection")
        };
        conn
    }

    /// Records that the transaction is over (`COMMIT` or `ROLLBACK` answered), so the
    /// connection can go back to the pool.
    pub(crate) fn end(&mut self) {
        self.ended = true;
    }
}

impl Drop for PipelinedTransaction {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take().filter(|_| !self.ended) {
            drop(Object::take(conn));
        }
    }
}

/// A connection from `pool`; an error carrying `StoreUnavailable` when none can be had.
pub(crate) async fn checkout(pool: &Pool) -> anyhow::Result<Object<AsyncPgConnection>> {
    pool.get().await.map_err(error::pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_split_as_evenly_as_they_divide_and_one_is_kept_for_threads_apart() {
        let sizes = |pool_size, shards| {
            let (workers, apart) = shard_sizes(pool_size, shards);
            (workers.collect::<Vec<_>>(), apart)
        };
        assert_eq!(sizes(16, 2), (vec![8, 7], Some(1)));
        assert_eq!(sizes(5, 2), (vec![2, 2], Some(1)));
        assert_eq!(sizes(10, 4), (vec![3, 2, 2, 2], Some(1)));
        assert_eq!(sizes(2, 2), (vec![1, 1], None), "none to spare");
        assert_eq!(sizes(2, 8), (vec![1, 1], None));
        assert_eq!(sizes(4, 1), (vec![3], Some(1)));
        assert_eq!(
            sizes(4, 0),
            (vec![3], Some(1)),
            "no cores reported: one worker shard"
        );
        assert_eq!(sizes(1, 2), (vec![1], None));
    }
}
