//! Liveness of PostgreSQL and the pool's figures.

use std::time::Duration;

use async_trait::async_trait;
use deckhand_domain::ports::{PoolStatus, StoreHealth};
use diesel_async::RunQueryDsl;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::server_settings;

pub(crate) struct PgHealth {
    pub(crate) pool: Pool,
    /// Through a transaction-mode pooler, the `statement_timeout` the server must run
    /// statements with (`server_settings`): each ping reads it instead of `SELECT 1`.
    pub(crate) statement_timeout: Option<Duration>,
}

#[async_trait]
impl StoreHealth for PgHealth {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn ping(&self) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        // Whatever stops a trivial query (a full pool, a lost connection, a statement timeout
        // under load) means the store cannot serve now.
        let Some(expected) = self.statement_timeout else {
            diesel::sql_query("SELECT 1")
                .execute(&mut conn)
                .await
                .map_err(error::unavailable)?;
            return Ok(());
        };
        let found = server_settings::statement_timeout_ms(&mut conn)
            .await
            .map_err(error::unavailable)?;
        server_settings::compare(&found, expected)?;
        Ok(())
    }

    fn pool_status(&self) -> Option<PoolStatus> {
        let status = self.pool.status();
        Some(PoolStatus {
            max_size: status.max_size,
            size: status.size,
            available: status.available,
            waiting: status.waiting,
        })
    }
}
