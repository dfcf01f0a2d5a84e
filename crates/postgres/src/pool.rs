//! The connection pool: how connections are made, checked and timed out.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use deadpool::managed::{HookError, HookFuture, Metrics};

use diesel::connection::CacheSize;
use diesel::sql_types::Text;
use diesel::{ConnectionError, ConnectionResult, QueryableByName};
use diesel_async::pooled_connection::deadpool::{Hook, Object};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use crate::{ended_sessions, error};

/// A pool of PostgreSQL connections.
pub type Pool = diesel_async::pooled_connection::deadpool::Pool<AsyncPgConnection>;

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

/// [`connect_with_timeout`], through `pooler`.
pub async fn connect_through(
    database_url: &str,
    pool_size: usize,
    statement_timeout: Duration,
    pooler: Pooler,
) -> anyhow::Result<Pool> {
    anyhow::ensure!(
        !statement_timeout.is_zero(),
        "a statement timeout of 0 would turn the limit off"
    );
    let timeout_ms = statement_timeout.as_millis();
    let mut config = ManagerConfig::default();
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |url| establish(url, timeout_ms, pooler));
    let manager =
        AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(database_url, config);
    ended_sessions::clock_start();
    let pool = Pool::builder(manager)
        .max_size(pool_size)
        .pre_recycle(Hook::async_fn(verify_if_suspect))
        .runtime(deadpool::Runtime::Tokio1)
        .wait_timeout(Some(POOL_TIMEOUT))
        .create_timeout(Some(POOL_TIMEOUT))
        .recycle_timeout(Some(POOL_TIMEOUT))
        .build()?;
    Ok(pool)
}

type SetupFuture<'a> =
    Pin<Box<dyn Future<Output = ConnectionResult<AsyncPgConnection>> + Send + 'a>>;

fn establish(database_url: &str, timeout_ms: u128, pooler: Pooler) -> SetupFuture<'_> {
    Box::pin(async move {
        let mut conn = AsyncPgConnection::establish(database_url).await?;
        match pooler {
            Pooler::None => conn
                .batch_execute(&format!("SET statement_timeout = {timeout_ms}"))
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
