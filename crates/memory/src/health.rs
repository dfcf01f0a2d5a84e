use async_trait::async_trait;
use deckhand_domain::ports::{PoolStatus, StoreHealth};

/// Memory is always there, and there is no pool.
pub(crate) struct MemoryHealth;

#[async_trait]
impl StoreHealth for MemoryHealth {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn ping(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn pool_status(&self) -> Option<PoolStatus> {
        None
    }
}
