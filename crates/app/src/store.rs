//! Choosing and opening the store.

use anyhow::Context as _;
use deckhand_domain::ports::Repositories;

use deckhand_postgres::Pooler;

use crate::settings::{DbPooler, StoreSettings};

/// The repositories of the configured store; PostgreSQL ones after applying migrations when
/// `migrate` is set. Migrations and LISTEN need sessions of their own (an advisory lock, a
/// listening connection), so they go straight to PostgreSQL (`StoreSettings::direct_url`);
/// everything else goes through `DATABASE_URL`, which may be a transaction-mode pooler.
pub async fn open(settings: &StoreSettings, migrate: bool) -> anyhow::Result<Repositories> {
    let (Some(url), Some(direct)) = (settings.database_url.as_deref(), settings.direct_url())
    else {
        return Ok(deckhand_memory::repositories());
    };
    if migrate {
        deckhand_postgres::run_migrations(direct)
            .await
            .context("applying database migrations")?;
    }
    let pooler = match settings.db_pooler {
        DbPooler::None => Pooler::None,
        DbPooler::Transaction => Pooler::Transaction,
    };
    let timeout = settings.statement_timeout();
    let pool =
        deckhand_postgres::connect_through(url, settings.db_pool_size as usize, timeout, pooler)
            .await
            .context("connecting to PostgreSQL")?;
    let listen = if direct == url && pooler == Pooler::None {
        pool.clone()
    } else {
        // Listeners take their connections out of this pool for good, one at a time.
        deckhand_postgres::connect_with_timeout(direct, 1, timeout)
            .await
            .context("connecting to PostgreSQL for LISTEN")?
    };
    Ok(deckhand_postgres::repositories_listening_on(pool, listen))
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
