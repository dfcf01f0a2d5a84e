//! A throwaway PostgreSQL for tests: the server (`DATABASE_URL`, or a local cluster started on
//! demand) and [`TestDb`], an isolated schema per test on it.

mod cluster;
pub mod direct;
mod pgbouncer;
mod recycle;
pub mod statements;
mod sweep;

use std::sync::OnceLock;

use anyhow::Context as _;
use deckhand_domain::ports::Repositories;
use deckhand_postgres::Pool;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, SimpleAsyncConnection as _};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

pub use cluster::{OwnCluster, local_cluster_dir, stop_local_cluster};
pub use pgbouncer::PgBouncer;

/// Connections per test: enough for a test's concurrent requests, few enough that many tests
/// in parallel stay far below the server's `max_connections`.
const POOL_SIZE: usize = 4;

/// The server the tests use: `DATABASE_URL` when set, else the local cluster, started on first
/// use (see [`local_cluster_dir`]).
///
/// # Panics
///
/// When no server can be had. Tests that need PostgreSQL must fail, never silently skip.
pub fn database_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| match std::env::var("DATABASE_URL") {
        Ok(url) if !url.trim().is_empty() => url,
        _ => cluster::start().unwrap_or_else(|error| panic!("{}", cannot_start(&error))),
    })
}

fn cannot_start(error: &anyhow::Error) -> String {
    let causes: Vec<String> = error.chain().map(|cause| format!("  {cause}")).collect();
    format!(
        "\n\ndeckhand_testkit could not start a throwaway PostgreSQL for the tests.\n\n\
         What failed:\n{}\n\n\
         To fix it, either\n  \
         * install the PostgreSQL server binaries (Debian/Ubuntu: `apt-get install postgresql`); \
         they are looked for on PATH, in /usr/lib/postgresql/*/bin and in `pg_config --bindir`, \
         and run as the `postgres` user when the tests run as root; or\n  \
         * set DATABASE_URL to a PostgreSQL server where the tests may create and drop schemas, \
         e.g. DATABASE_URL=postgresql://postgres@localhost/postgres\n\n\
         The local cluster lives in {}; its server log is postgres.log there.\n",
        causes.join("\n"),
        local_cluster_dir().display()
    )
}

/// An isolated schema, `test_<time>_<random>`, with every migration applied, on the test
/// server.
///
/// Its URL and pool put the schema first on `search_path`, so the adapters see only its tables
/// and tests run in parallel without sharing rows. Dropping it after a passed test hands the
/// schema on to the next test of the process, which gets it emptied (see [`recycle`]); after a
/// failed one it drops the schema. Schemas that ended runs left behind are swept by a later
/// run (see [`sweep`]).
pub struct TestDb {
    schema: String,
    url: String,
    pool: Pool,
}

impl TestDb {
    /// # Panics
    ///
    /// When the server cannot be reached or the migrations fail.
    pub async fn new() -> Self {
        Self::create()
            .await
            .unwrap_or_else(|error| panic!("could not set up a test schema: {error:?}"))
    }

    async fn create() -> anyhow::Result<Self> {
        sweep::prepare_server().await?;
        let mut admin = AsyncPgConnection::establish(database_url())
            .await
            // Not the URL itself, which may hold a password.
            .context("connecting to the test server")?;
        if let Some(schema) = recycle::take(&mut admin).await {
            return Self::open(schema).await;
        }
        let schema = sweep::new_schema_name();
        admin
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await
            .context("creating the test schema")?;
        // From here on, a failure drops `db` and with it the schema.
        let db = Self::open(schema).await?;
        deckhand_postgres::run_migrations(&db.url)
            .await
            .context("migrating the test schema")?;
        recycle::remember_migrated(&mut admin, &db.schema).await?;
        Ok(db)
    }

    /// A pool on an existing schema.
    async fn open(schema: String) -> anyhow::Result<Self> {
        let url = schema_url(database_url(), &schema)?;
        Ok(Self {
            pool: deckhand_postgres::connect(&url, POOL_SIZE).await?,
            schema,
            url,
        })
    }

    /// A pool on the schema.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// A connection URL whose sessions use the schema.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The schema's name, also the `application_name` of its connections.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The PostgreSQL repositories over the schema.
    pub fn repositories(&self) -> Repositories {
        deckhand_postgres::repositories(self.pool.clone())
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        self.pool.close();
        // A passed test's schema serves the next test; a failed one's goes with the failure.
        if std::thread::panicking() {
            drop_schema(&self.schema);
        } else {
            recycle::give_back(self.schema.clone());
        }
    }
}

/// Drops `schema` from a thread with a runtime of its own: Drop cannot await, and may run
/// inside the test's runtime, which cannot be blocked on. A lock timeout bounds the wait: a
/// failed test may have left a transaction open on a connection its runtime no longer drives,
/// and the drop would wait for its locks for ever.
fn drop_schema(schema: &str) {
    let statement = format!("SET lock_timeout = '10s'; DROP SCHEMA {schema} CASCADE");
    let dropped = std::thread::spawn(move || -> anyhow::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let mut conn = AsyncPgConnection::establish(database_url()).await?;
            conn.batch_execute(&statement).await?;
            Ok(())
        })
    })
    .join();
    // Never panic in Drop: a leftover schema costs nothing but space in a throwaway server.
    match dropped {
        Ok(Ok(())) => {}
        Ok(Err(error)) => eprintln!("could not drop test schema {schema}: {error:#}"),
        Err(_) => eprintln!("dropping test schema {schema} panicked"),
    }
}

/// A URL whose sessions use `schema`: tokio-postgres sends `options` at connection start, so
/// every pooled connection gets the search_path; `application_name` tells the schema's
/// connections apart on the server.
fn schema_url(base: &str, schema: &str) -> anyhow::Result<String> {
    with_params(
        base,
        &[
            ("options", &format!("-c search_path={schema},public")),
            ("application_name", schema),
        ],
    )
}

/// `url` with query parameters added.
fn with_params(url: &str, params: &[(&str, &str)]) -> anyhow::Result<String> {
    anyhow::ensure!(
        url.starts_with("postgres://") || url.starts_with("postgresql://"),
        "DATABASE_URL must be a URL (postgresql://...), not key=value pairs"
    );
    let mut url = url.to_owned();
    for (key, value) in params {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(key);
        url.push('=');
        url.extend(utf8_percent_encode(value, NON_ALPHANUMERIC));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_appended_and_encoded() {
        assert_eq!(
            with_params("postgresql://u@/db?host=%2Ftmp", &[("options", "-c a=b,c")]).ok(),
            Some("postgresql://u@/db?host=%2Ftmp&options=%2Dc%20a%3Db%2Cc".to_owned())
        );
        assert_eq!(
            with_params("postgres://u@h/db", &[("application_name", "x")]).ok(),
            Some("postgres://u@h/db?application_name=x".to_owned())
        );
        assert!(with_params("host=/tmp dbname=db", &[]).is_err());
    }
}
