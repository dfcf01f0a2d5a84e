//! The migrations in `migrations/`, embedded in the binary.

use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

/// Every migration, for tools and tests that need more than [`run_migrations`] (reverting them,
/// say).
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

type BlockingConnection = AsyncConnectionWrapper<AsyncPgConnection>;

/// Applies the pending migrations to the database (and `search_path`) of `database_url`.
///
/// Safe to run from several instances at once: they take turns on an advisory lock, so a rolling
/// deploy whose instances all migrate on start applies each migration once.
pub async fn run_migrations(database_url: &str) -> anyhow::Result<()> {
    with_blocking_connection(database_url, |conn| {
        // Keyed by schema so that test schemas migrate in parallel. Held until the connection
        // closes at the end of this call.
        conn.batch_execute(
            "SELECT pg_advisory_lock(hashtextextended('deckhand migrations ' || current_schema(), 0))",
        )?;
        let applied = conn
            .run_pending_migrations(MIGRATIONS)
            .map_err(|error| anyhow::anyhow!(error))?;
        for version in applied {
            tracing::info!(%version, "applied migration");
        }
        Ok(())
    })
    .await
}

/// The names of the migrations not yet applied to the database of `database_url`.
pub async fn pending_migrations(database_url: &str) -> anyhow::Result<Vec<String>> {
    with_blocking_connection(database_url, |conn| {
        let pending = conn
            .pending_migrations(MIGRATIONS)
            .map_err(|error| anyhow::anyhow!(error))?;
        Ok(pending
            .iter()
            .map(|migration| migration.name().to_string())
            .collect())
    })
    .await
}

/// diesel's migration harness is synchronous: run it on a blocking thread over the async
/// connection, as diesel-async documents, so that it works on any runtime flavour.
async fn with_blocking_connection<T: Send + 'static>(
    database_url: &str,
    work: impl FnOnce(&mut BlockingConnection) -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let database_url = database_url.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = BlockingConnection::establish(&database_url)
            .map_err(|error| crate::error::unavailable(error).context("connecting to migrate"))?;
        work(&mut conn)
    })
    .await?
}
