//! Collection ports. See the crate's error contract in [`crate::ports`].

use std::collections::HashMap;

use async_trait::async_trait;
use uuid::Uuid;

use super::model::{CollectionEntry, CollectionQuery, CollectionTotals, CollectionWrite};
use crate::decks::Page;
use crate::identity::UserId;

/// Why a store refused a write.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The line at request position `index` would take a quantity below zero ([`super::Held::after`]);
    /// nothing was written. The lowest such position when several would.
    #[error("change {index} would take a quantity below zero")]
    BelowZero { index: usize },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait CollectionRepository: Send + Sync {
    /// Applies `write` in one transaction, with its `collection.updated` event
    /// ([`CollectionWrite::event`], with the totals after it) and one more `version`: all of it
    /// or, on [`ApplyError::BelowZero`], nothing. Concurrent writes of one collection are
    /// serialized, never lose a delta, and number their versions without gaps. Entries whose
    /// quantity reaches zero are removed.
    async fn apply(&self, write: &CollectionWrite) -> Result<CollectionTotals, ApplyError>;

    /// The totals of `owner`'s collection of `game` (all zero for one never written).
    async fn totals(&self, owner: UserId, game: &str) -> anyhow::Result<CollectionTotals>;

    /// One page of entries matching the query's filter, sorted by
    /// [`CollectionEntry::sort_key`], with the total counted up to the result window.
    async fn list(&self, query: &CollectionQuery) -> anyhow::Result<Page<CollectionEntry>>;

    /// Every entry, in the listing's order (the export).
    async fn all(&self, owner: UserId, game: &str) -> anyhow::Result<Vec<CollectionEntry>>;

    /// How many copies of each of `cards` the collection holds, any printing and finish; cards
    /// held by none are left out.
    async fn owned(
        &self,
        owner: UserId,
        game: &str,
        cards: &[Uuid],
    ) -> anyhow::Result<HashMap<Uuid, u64>>;
}
