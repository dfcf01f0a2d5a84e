use serde_json::json;
use time::OffsetDateTime;

use super::model::CollectionTotals;
use crate::events::{EventRecord, EventType, Origin};
use crate::identity::UserId;

/// `collection.updated`: its subject is the owner's collection of `game`, named by the owner's
/// id; `data` carries the totals after the write.
pub fn updated(
    origin: &Origin,
    game: &str,
    owner: UserId,
    totals: &CollectionTotals,
    at: OffsetDateTime,
) -> EventRecord {
    origin.record(
        EventType::CollectionUpdated,
        game,
        Some(owner.0),
        at,
        json!({"entries": totals.entries, "cards": totals.cards, "version": totals.version}),
    )
}
