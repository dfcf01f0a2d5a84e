//! Which deck change makes which event, with what `data` (contract "Events"). Stores call
//! [`saved`] with the save they are about to commit, so the record and the change are decided
//! together.

use serde_json::json;
use time::OffsetDateTime;

use crate::events::{EventRecord, EventType, Origin};

use super::model::{Deck, DeckId, ForkedFrom, HistoryType};
use super::ports::Revision;

/// `deck.created`: version 1, and the deck it was forked from, if any.
pub fn created(
    origin: &Origin,
    game: &str,
    deck: DeckId,
    forked_from: Option<ForkedFrom>,
    at: OffsetDateTime,
) -> EventRecord {
    let forked_from =
        forked_from.map(|source| json!({"deck_id": source.deck_id.0, "version": source.version}));
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
        &before.facts.game,
        Some(before.facts.id.0),
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::OffsetDateTime;
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::decks::{Visibility, test_decks};
    use crate::events::{Actor, EventId};
    use crate::identity::UserId;

    const NOW: OffsetDateTime = datetime!(2026-11-26 12:00 UTC);

    fn owner() -> UserId {
        UserId(Uuid::from_u128(1))
    }

    fn origin() -> Origin {
        Origin {
            event_id: EventId(Uuid::from_u128(99)),
            actor: Actor {
                user_id: Some(owner()),
                partner: Some("acme".into()),
            },
        }
    }

    fn revision(deck: &Deck, history_type: HistoryType) -> Revision {
        Revision {
            content: deck.content.clone(),
            summary: deck.facts.summary.clone(),
            provenance: deck.provenance.clone(),
            is_archived: deck.is_archived,
            history_type,
            at: NOW,
            origin: origin(),
        }
    }

    fn stored_deck() -> crate::decks::Deck {
        let content = test_decks::content("Burn", Visibility::Private, vec![]);
        test_decks::deck(DeckId(Uuid::from_u128(7)), owner(), "owner", content, NOW)
    }

    #[test]
    fn a_save_names_the_fields_whose_value_changed_sorted() {
        let deck = stored_deck();
        let mut save = revision(&deck, HistoryType::Update);
        save.content.name = "Burn 2".into();
        save.content.visibility = Visibility::Public;
        save.content.legal = true;
        save.is_archived = true;
        let event = saved(&deck, &save);
        assert_eq!(event.event_type, EventType::DeckUpdated);
        assert_eq!(
            event.data,
            json!({"version": 2, "changed": ["is_archived", "legal", "name", "visibility"]})
        );
        assert_eq!(event.subject_id, Some(deck.facts.id.0));
        assert_eq!((event.id, event.occurred_at), (origin().event_id, NOW));
        assert_eq!(event.actor, origin().actor);
    }

    #[test]
    fn a_save_that_changes_nothing_is_still_an_update_with_nothing_changed() {
        let deck = stored_deck();
        let event = saved(&deck, &revision(&deck, HistoryType::Update));
        assert_eq!(event.data, json!({"version": 2, "changed": []}));
    }

    #[test]
    fn a_rollback_says_which_version_it_restored() {
        let deck = stored_deck();
        let rollback = revision(&deck, HistoryType::Rollback { restored_from: 1 });
        let event = saved(&deck, &rollback);
        assert_eq!(event.event_type, EventType::DeckRolledBack);
        assert_eq!(event.data, json!({"version": 2, "restored_from": 1}));
    }

    #[test]
    fn a_new_deck_is_version_one_and_says_what_it_was_forked_from() {
        let deck = DeckId(Uuid::from_u128(7));
        let source = DeckId(Uuid::from_u128(8));
        let plain = created(&origin(), "mtg", deck, None, NOW);
        assert_eq!(plain.data, json!({"version": 1, "forked_from": null}));
        let forked_from = ForkedFrom {
            deck_id: source,
            version: 3,
        };
        let fork = created(&origin(), "mtg", deck, Some(forked_from), NOW);
        assert_eq!(
            fork.data,
            json!({"version": 1, "forked_from": {"deck_id": source.0, "version": 3}})
        );
    }
}
