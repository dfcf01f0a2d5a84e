use serde_json::json;

use super::model::{CollectionTotals, CollectionWrite};
use crate::events::{EventRecord, EventType};

impl CollectionWrite {
    /// `collection.updated`, once the store knows the totals after the write: its subject is
    /// the owner's collection of the game, named by the owner's id; `data` carries the totals.
    pub fn event(&self, totals: &CollectionTotals) -> EventRecord {
        self.origin.record(
            EventType::CollectionUpdated,
            &self.game,
            Some(self.owner.0),
            self.at,
            json!({"entries": totals.entries, "cards": totals.cards, "version": totals.version}),
        )
    }
}
