//! Which deck change makes which event, with what `data` (contract "Events"). Stores call
//! [`saved`] with the save they are about to commit, so the record and the change are decided
//! together.

use serde_json::json;
use time::OffsetDateTime;

use crate::events::{EventRecord, EventType, Origin};

use super::model::{Deck, DeckId, HistoryType};
use super::ports::Revision;

/// `deck.created`: version 1, and the deck it was forked from, if any.
pub fn created(
    origin: &Origin,
    game: &str,
    deck: DeckId,
    forked_from: Option<(DeckId, i32)>,
    at: OffsetDateTime,
) -> EventRecord {
    let forked_from =
        forked_from.map(|(source, version)| json!({"deck_id": source.0, "version": version}));
    origin.record(
        EventType::DeckCreated,
        game,
        Some(deck.0),
        at,
        json!({"version": 1, "forked_from": forked_from}),
    )
}

/// A save of `before` as `revision`: `deck.rolled_back` for a rollback, else `deck.updated`
/// naming the top-level fields whose value changed (an archive is `is_archived`).
pub fn saved(before: &Deck, revision: &Revision) -> EventRecord {
    let version = before.version + 1;
    let (event_type, data) = match revision.history_type {
        HistoryType::Rollback { restored_from } => (
            EventType::DeckRolledBack,
            json!({"version": version, "restored_from": restored_from}),
        ),
        HistoryType::Create | HistoryType::Update => (
            EventType::DeckUpdated,
            json!({"version": version, "changed": changes(before, revision)}),
        ),
    };
    revision.origin.record(
        event_type,
        &before.game,
        Some(before.id.0),
        revision.at,
        data,
    )
}

/// The names of the deck's top-level fields a revision changes, sorted.
pub fn changes(before: &Deck, revision: &Revision) -> Vec<&'static str> {
    let (old, new) = (&before.content, &revision.content);
    let (was, now) = (&before.provenance, &revision.provenance);
    let mut changed: Vec<&'static str> = [
        ("name", old.name != new.name),
        ("notes", old.notes != new.notes),
        ("visibility", old.visibility != new.visibility),
        ("format", old.format_id != new.format_id),
        ("youtube_url", old.youtube_url != new.youtube_url),
        ("thumbnail", old.thumbnail != new.thumbnail),
        ("legal", old.legal != new.legal),
        ("archetype", old.archetype != new.archetype),
        ("cards", old.cards != new.cards),
        ("featured", old.featured != new.featured),
        ("is_archived", before.is_archived != revision.is_archived),
        (
            "source_provider",
            was.source_provider != now.source_provider,
        ),
        (
            "source_external_id",
            was.source_external_id != now.source_external_id,
        ),
        (
            "source_external_version",
            was.source_external_version != now.source_external_version,
        ),
        (
            "source_external_url",
            was.source_external_url != now.source_external_url,
        ),
        (
            "source_imported_at",
            was.source_imported_at != now.source_imported_at,
        ),
    ]
    .into_iter()
    .filter_map(|(name, differs)| differs.then_some(name))
    .collect();
    changed.sort_unstable();
    changed
}

/// `deck.strategy_guide.updated` (written or replaced) or `.deleted`.
pub fn strategy_guide(
    origin: &Origin,
    game: &str,
    deck: DeckId,
    deleted: bool,
    at: OffsetDateTime,
) -> EventRecord {
    let event_type = if deleted {
        EventType::DeckStrategyGuideDeleted
    } else {
        EventType::DeckStrategyGuideUpdated
    };
    origin.record(event_type, game, Some(deck.0), at, json!({}))
}
