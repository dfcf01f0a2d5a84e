//! Counting what a server is sent, with `pg_stat_statements` on a cluster of a test's own: the
//! statements a request costs, or what an idle instance sends in a minute.

use anyhow::Context as _;
use diesel_async::SimpleAsyncConnection as _;

use super::OwnCluster;
use super::direct::{connect, select_json};

/// Loads `pg_stat_statements` into `cluster` (a restart) and creates its view.
///
/// # Errors
///
/// When the server cannot be restarted or the extension is not installed (Debian's
/// `postgresql-<version>` package ships it).
pub async fn track_statements(cluster: &OwnCluster) -> anyhow::Result<()> {
    let mut conn = connect(&cluster.url()).await;
    conn.batch_execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        .await
        .context("loading pg_stat_statements at the next start")?;
    drop(conn);
    cluster.stop()?;
    cluster.restart()?;
    let mut conn = connect(&cluster.url()).await;
    conn.batch_execute(
        "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; \
         SELECT pg_stat_statements_reset()",
    )
    .await
    .context("creating pg_stat_statements (is the server's contrib module installed?)")
}

/// What the server was sent since the last [`StatementCounter::reset`], its own bookkeeping left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sent {
    /// Statements executed (`calls`), BEGIN and COMMIT included.
    pub statements: i64,
    /// Their execution time on the server, in milliseconds.
    pub exec_ms: f64,
}

/// A connection of its own that reads and resets the counts (made once, so that making it
/// counts nothing between a reset and a read).
pub struct StatementCounter {
    conn: diesel_async::AsyncPgConnection,
}

impl StatementCounter {
    pub async fn new(url: &str) -> Self {
        Self {
            conn: connect(url).await,
        }
    }

    /// Forgets what was counted so far.
    pub async fn reset(&mut self) -> anyhow::Result<()> {
        self.conn
            .batch_execute("SELECT pg_stat_statements_reset()")
            .await
            .context("resetting pg_stat_statements")
    }

    /// What was sent since the last reset, and each statement with its calls (most first).
    /// Left out: the pool's liveness check (`SELECT 1`) of a connection handed out before a
    /// session was seen ended anywhere in the process (`postgres::ended_sessions`), which
    /// another test's cluster stopping sets off: not the cost of what is being counted.
    pub async fn sent(&mut self) -> anyhow::Result<(Sent, Vec<(String, i64)>)> {
        let counted = select_json(
            &mut self.conn,
            "SELECT json_build_object(
             'calls', coalesce(sum(calls), 0),
             'exec_ms', coalesce(sum(total_exec_time), 0),
             'each', coalesce(json_agg(json_build_array(query, calls) ORDER BY calls DESC), '[]')
         )::text AS json
         FROM pg_stat_statements
         WHERE query NOT LIKE '%pg_stat_statements%' AND query <> 'SELECT $1'",
        )
        .await?;
        let each = counted["each"]
            .as_array()
            .context("the statements")?
            .iter()
            .map(|pair| {
                (
                    pair[0].as_str().unwrap_or_default().to_owned(),
                    pair[1].as_i64().unwrap_or_default(),
                )
            })
            .collect();
        Ok((
            Sent {
                statements: counted["calls"].as_i64().context("calls")?,
                exec_ms: counted["exec_ms"].as_f64().context("exec_ms")?,
            },
            each,
        ))
    }
}
