//! Choosing and opening the store.

use anyhow::Context as _;
use deckhand_domain::ports::Repositories;

use crate::settings::StoreSettings;

/// The repositories of the configured store; PostgreSQL ones after applying migrations when
/// `migrate` is set.
pub async fn open(settings: &StoreSettings, migrate: bool) -> anyhow::Result<Repositories> {
    match &settings.database_url {
        Some(url) => {
            if migrate {
                deckhand_postgres::run_migrations(url)
                    .await
                    .context("applying database migrations")?;
            }
            let pool = deckhand_postgres::connect_with_timeout(
                url,
                settings.db_pool_size as usize,
                settings.statement_timeout(),
            )
            .await
            .context("connecting to PostgreSQL")?;
            Ok(deckhand_postgres::repositories(pool))
        }
        None => Ok(deckhand_memory::repositories()),
    }
}

/// The PostgreSQL repositories; operator commands make no sense on a memory store that dies
/// with the command.
pub async fn open_postgres(settings: &StoreSettings) -> anyhow::Result<Repositories> {
    anyhow::ensure!(
        settings.database_url.is_some(),
        "this command needs DATABASE_URL: the in-memory store lives only inside a running `deckhand serve`"
    );
    open(settings, false).await
}
