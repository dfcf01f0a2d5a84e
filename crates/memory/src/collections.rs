//! Users' collections in memory: one map of entries per user and game, changed under the
//! store's lock with the domain's delta rule ([`held_after`]).

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use deckhand_domain::collections::ports::{ApplyError, CollectionRepository};
use deckhand_domain::collections::{
    CollectionEntry, CollectionQuery, CollectionTotals, CollectionWrite, Held, WriteMode,
    held_after,
};
use deckhand_domain::decks::{Page, SortOrder};
use deckhand_domain::identity::UserId;
use uuid::Uuid;

use crate::Store;

/// One user's collection of one game: entries by (printing, foil).
#[derive(Debug, Default, Clone)]
struct Collection {
    version: i64,
    entries: BTreeMap<(Uuid, bool), CollectionEntry>,
}

impl Collection {
    fn totals(&self) -> CollectionTotals {
        CollectionTotals {
            entries: self.entries.len() as u64,
            cards: self
                .entries
                .values()
                .map(|entry| u64::from(entry.quantity))
                .sum(),
            version: self.version,
        }
    }

    fn sorted(&self) -> Vec<&CollectionEntry> {
        let mut entries: Vec<&CollectionEntry> = self.entries.values().collect();
        entries.sort_by_key(|entry| (entry.sort_key(), entry.card.variant_id));
        entries
    }
}

#[derive(Debug, Default)]
pub(crate) struct Tables {
    collections: HashMap<(UserId, String), Collection>,
}

pub(crate) struct MemoryCollections(pub(crate) Store);

/// `collection` after `write` ([`held_after`]), or the position of the first line that would
/// go below zero.
fn applied(collection: &Collection, write: &CollectionWrite) -> Result<Collection, usize> {
    let mut next = collection.clone();
    if write.mode == WriteMode::Replace {
        next.entries.clear();
    }
    let after = held_after(&write.lines, |line| {
        next.entries
            .get(&(line.card.variant_id, line.foil))
            .map_or(Held::default(), Held::from)
    })?;
    for (line, after) in write.lines.iter().zip(after) {
        let key = (line.card.variant_id, line.foil);
        let previous = next.entries.remove(&key);
        if after.quantity == 0 {
            continue;
        }
        let kept = |given: &Option<String>, old: Option<&Option<String>>| {
            given.clone().or_else(|| old.cloned().flatten())
        };
        next.entries.insert(
            key,
            CollectionEntry {
                card: line.card.clone(),
                foil: line.foil,
                quantity: u32::try_from(after.quantity).map_err(|_| line.index)?,
                trade_quantity: u32::try_from(after.trade_quantity).map_err(|_| line.index)?,
                condition: kept(&line.condition, previous.as_ref().map(|e| &e.condition)),
                language: kept(&line.language, previous.as_ref().map(|e| &e.language)),
            },
        );
    }
    next.version += 1;
    Ok(next)
}

#[async_trait]
impl CollectionRepository for MemoryCollections {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn apply(&self, write: &CollectionWrite) -> Result<CollectionTotals, ApplyError> {
        let mut state = self.0.lock();
        let key = (write.owner, write.game.clone());
        let current = state
            .collections
            .collections
            .get(&key)
            .cloned()
            .unwrap_or_default();
        let next = applied(&current, write).map_err(|index| ApplyError::BelowZero { index })?;
        let totals = next.totals();
        state.collections.collections.insert(key, next);
        state.events.record(&write.event(&totals));
        Ok(totals)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn totals(&self, owner: UserId, game: &str) -> anyhow::Result<CollectionTotals> {
        let state = self.0.lock();
        Ok(state
            .collections
            .collections
            .get(&(owner, game.to_owned()))
            .map(Collection::totals)
            .unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, query: &CollectionQuery) -> anyhow::Result<Page<CollectionEntry>> {
        let state = self.0.lock();
        let empty = Collection::default();
        let collection = state
            .collections
            .collections
            .get(&(query.owner, query.game.clone()))
            .unwrap_or(&empty);
        let found: Vec<&CollectionEntry> = collection
            .entries
            .values()
            .filter(|entry| query.filter.admits(entry))
            .collect();
        crate::list::page(
            found,
            SortOrder::Asc,
            query.page,
            |a, b| (a.sort_key(), a.card.variant_id).cmp(&(b.sort_key(), b.card.variant_id)),
            |entry| Ok(entry.clone()),
        )
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn all(&self, owner: UserId, game: &str) -> anyhow::Result<Vec<CollectionEntry>> {
        let state = self.0.lock();
        Ok(state
            .collections
            .collections
            .get(&(owner, game.to_owned()))
            .map(|collection| collection.sorted().into_iter().cloned().collect())
            .unwrap_or_default())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn owned(
        &self,
        owner: UserId,
        game: &str,
        cards: &[Uuid],
    ) -> anyhow::Result<HashMap<Uuid, u64>> {
        let state = self.0.lock();
        let mut owned = HashMap::new();
        if let Some(collection) = state.collections.collections.get(&(owner, game.to_owned())) {
            for entry in collection.entries.values() {
                if cards.contains(&entry.card.card_id) {
                    *owned.entry(entry.card.card_id).or_insert(0) += u64::from(entry.quantity);
                }
            }
        }
        Ok(owned)
    }
}
