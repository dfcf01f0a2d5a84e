//! Liveness of PostgreSQL and the pool's figures.

use async_trait::async_trait;
use deckhand_domain::ports::{PoolStatus, StoreHealth};
use diesel_async::RunQueryDsl;

use crate::error;
use crate::pool::{Pool, checkout};

pub(crate) struct PgHealth {
    pub(crate) pool: Pool,
}

#[async_trait]
impl StoreHealth for PgHealth {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn ping(&self) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        // Whatever stops a trivial query (a full pool, a lost connection, a statement timeout
        // under load) means the store cannot serve now.
        diesel::sql_query("SELECT 1")
            .execute(&mut conn)
            .await
            .map_err(error::unavailable)?;
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
