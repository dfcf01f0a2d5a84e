//! Which sideboard guide change makes which event, with what `data` (contract "Events").
//! Stores call [`saved`] with the PATCH they are about to commit.

use serde_json::json;
use time::OffsetDateTime;

use crate::decks::DeckId;
use crate::events::{EventRecord, EventType, Origin};

use super::model::{GuideId, MatchupId, SideboardGuide};
use super::ports::GuideRevision;

/// `sideboard_guide.created`, naming its primary deck.
pub fn created(
    origin: &Origin,
    game: &str,
    guide: GuideId,
    primary_deck: DeckId,
    at: OffsetDateTime,
) -> EventRecord {
    origin.record(
        EventType::GuideCreated,
        game,
        Some(guide.0),
        at,
        json!({"deck_id": primary_deck.0}),
    )
}

/// `sideboard_guide.updated`: a PATCH of `before` as `revision`, naming the changed fields.
pub fn saved(before: &SideboardGuide, revision: &GuideRevision) -> EventRecord {
    let (old, new) = (&before.content, &revision.content);
    let mut changed: Vec<&'static str> = [
        ("name", old.name != new.name),
        ("description", old.description != new.description),
        ("notes", old.notes != new.notes),
        ("visibility", old.visibility != new.visibility),
        ("tags", old.tags != new.tags),
        ("format", old.format != new.format),
        ("thumbnail", old.thumbnail != new.thumbnail),
        ("youtube_url", old.youtube_url != new.youtube_url),
        ("premium", old.premium != new.premium),
        ("is_archived", before.is_archived != revision.is_archived),
    ]
    .into_iter()
    .filter_map(|(name, differs)| differs.then_some(name))
    .collect();
    changed.sort_unstable();
    revision.origin.record(
        EventType::GuideUpdated,
        &before.game,
        Some(before.id.0),
        revision.at,
        json!({"changed": changed}),
    )
}

/// `sideboard_guide.deck_attached` or `.deck_detached`.
pub fn deck_membership(
    origin: &Origin,
    game: &str,
    guide: GuideId,
    deck: DeckId,
    attached: bool,
    at: OffsetDateTime,
) -> EventRecord {
    let event_type = if attached {
        EventType::GuideDeckAttached
    } else {
        EventType::GuideDeckDetached
    };
    origin.record(
        event_type,
        game,
        Some(guide.0),
        at,
        json!({"deck_id": deck.0}),
    )
}

/// A matchup of a guide created, updated or deleted (`event_type` says which).
pub fn matchup(
    origin: &Origin,
    event_type: EventType,
    game: &str,
    guide: GuideId,
    matchup: MatchupId,
    at: OffsetDateTime,
) -> EventRecord {
    origin.record(
        event_type,
        game,
        Some(guide.0),
        at,
        json!({"matchup_id": matchup.0}),
    )
}
