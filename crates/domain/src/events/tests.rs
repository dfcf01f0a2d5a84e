//! The event rules without a store: which change makes which event, who reads what, and how a
//! page of the feed ends.

use serde_json::json;
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

use super::*;
use crate::identity::{
    GameScopes, Lane, PartnerRef, Principal, PrincipalUser, Scope, Scopes, Tier, UserId, Username,
};
use crate::readable::Visibility;

const NOW: OffsetDateTime = datetime!(2026-11-26 12:00 UTC);

fn owner() -> UserId {
    UserId(Uuid::from_u128(1))
}

fn stranger() -> UserId {
    UserId(Uuid::from_u128(2))
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

fn scopes(names: &str) -> Scopes {
    Scopes::parse_list(names).unwrap()
}

fn reader(viewer: UserId, names: &str) -> FeedReader {
    FeedReader::of(&Principal {
        lane: Lane::PersonalAccessToken,
        user: Some(PrincipalUser {
            id: viewer,
            username: Username::parse("reader").unwrap(),
            premium: false,
        }),
        partner: None,
        scopes: scopes(names),
    })
}

#[test]
fn the_reader_needs_the_read_scope_of_each_kind_and_the_subject_readable_now() {
    let private = SubjectAccess {
        visibility: Visibility::Private,
        owner: owner(),
        is_archived: false,
    };
    let public_archived = SubjectAccess {
        visibility: Visibility::Public,
        owner: owner(),
        is_archived: true,
    };
    let both = "decks:read sideboards:read";
    for (reader, kind, subject, listed) in [
        (
            reader(owner(), both),
            SubjectKind::Deck,
            Some(private),
            true,
        ),
        (
            reader(stranger(), both),
            SubjectKind::Deck,
            Some(private),
            false,
        ),
        // Archived items stay readable by id, so their events stay listed.
        (
            reader(stranger(), both),
            SubjectKind::Deck,
            Some(public_archived),
            true,
        ),
        (
            reader(owner(), "sideboards:read"),
            SubjectKind::Deck,
            Some(private),
            false,
        ),
        (
            reader(owner(), "decks:read"),
            SubjectKind::SideboardGuide,
            Some(private),
            false,
        ),
        (
            reader(owner(), both),
            SubjectKind::SideboardGuide,
            Some(private),
            true,
        ),
        (reader(owner(), both), SubjectKind::Deck, None, false),
        // The catalog is everyone's, whatever the scopes.
        (
            reader(stranger(), "decks:write"),
            SubjectKind::Catalog,
            None,
            true,
        ),
    ] {
        assert_eq!(
            reader.admits(kind, subject),
            listed,
            "{reader:?} {kind:?} {subject:?}"
        );
    }
}

#[test]
fn a_partner_alone_reads_as_the_user_that_created_it() {
    let partner = Principal {
        lane: Lane::PartnerApiKey,
        user: None,
        partner: Some(PartnerRef {
            slug: "acme".into(),
            created_by: owner(),
            game_scopes: GameScopes::All,
            tier: Tier::partner(),
        }),
        scopes: scopes("decks:read"),
    };
    let reader = FeedReader::of(&partner);
    assert_eq!(reader.viewer, Some(owner()));
    assert!(reader.deck_events && !reader.guide_events);
    assert!(partner.scopes.contains(Scope::DecksRead));
}

#[test]
fn types_take_exact_names_and_prefixes_and_refuse_the_unknown() {
    let filter = TypeFilter::parse("deck.*, sideboard_guide.created").unwrap();
    assert!(filter.admits(EventType::DeckStrategyGuideDeleted));
    assert!(filter.admits(EventType::GuideCreated));
    assert!(!filter.admits(EventType::GuideUpdated));
    assert!(!filter.admits(EventType::CatalogImported));
    assert_eq!(TypeFilter::parse("").unwrap(), TypeFilter::all());
    assert!(!TypeFilter::all().admits(EventType::WebhookPing));
    for unknown in [
        "deck",
        "deck.deleted",
        "nope.*",
        "webhook.ping",
        "webhook.*",
        "*",
    ] {
        assert_eq!(
            TypeFilter::parse(unknown),
            Err(UnknownEventType(unknown.to_owned())),
            "{unknown}"
        );
    }
}

fn event(sequence: i64) -> Event {
    Event {
        sequence,
        record: origin().record(EventType::CatalogImported, "mtg", None, NOW, json!({})),
    }
}

fn query(after: i64, limit: u32) -> FeedQuery {
    FeedQuery {
        game: "mtg".into(),
        after: Some(Cursor { sequence: after }),
        types: TypeFilter::all(),
        limit,
        reader: reader(owner(), "decks:read"),
    }
}

fn scan(readable: Vec<i64>, scanned: u32, last_sequence: i64) -> FeedScan {
    FeedScan {
        scanned_through: (scanned > 0).then(|| readable.last().copied().unwrap_or(last_sequence)),
        readable: readable.into_iter().map(event).collect(),
        scanned,
        last_sequence,
        pruned_through: 0,
    }
}

#[test]
fn a_full_page_ends_at_its_last_event_and_says_there_is_more() {
    let page = scan(vec![3, 4, 5], 3, 9).page(&query(2, 2)).unwrap();
    let sequences: Vec<i64> = page.events.iter().map(|event| event.sequence).collect();
    assert_eq!(sequences, [3, 4]);
    assert!(page.has_more);
    assert_eq!(page.next, Cursor { sequence: 4 });
}

#[test]
fn the_last_page_moves_the_cursor_past_everything_the_log_holds() {
    // Events 6 to 9 were in other games or hidden: the next read starts after 9.
    let page = scan(vec![3], 1, 9).page(&query(2, 10)).unwrap();
    assert!(!page.has_more);
    assert_eq!(page.next, Cursor { sequence: 9 });
    let empty = scan(vec![], 0, 9).page(&query(9, 10)).unwrap();
    assert_eq!(
        (empty.events.len(), empty.next),
        (0, Cursor { sequence: 9 })
    );
}

#[test]
fn a_scan_window_of_hidden_events_moves_the_cursor_past_it() {
    let mut hidden = scan(vec![], FEED_SCAN_WINDOW, 5000);
    hidden.scanned_through = Some(1002);
    let page = hidden.page(&query(2, 10)).unwrap();
    assert!(page.events.is_empty() && page.has_more);
    assert_eq!(page.next, Cursor { sequence: 1002 });
}

#[test]
fn a_cursor_before_the_pruned_events_has_expired() {
    let mut pruned = scan(vec![], 0, 9);
    pruned.pruned_through = 5;
    assert_eq!(pruned.clone().page(&query(4, 10)), None);
    assert!(pruned.page(&query(5, 10)).is_some());
}

#[test]
fn a_read_without_a_cursor_starts_at_the_oldest_retained_event() {
    let mut pruned = scan(vec![], 0, 9);
    pruned.pruned_through = 5;
    let from_oldest = FeedQuery {
        after: None,
        ..query(0, 10)
    };
    let page = pruned.page(&from_oldest).unwrap();
    assert_eq!(
        (page.events.len(), page.has_more, page.next),
        (0, false, Cursor { sequence: 9 })
    );
}

#[test]
fn the_wire_form_is_the_contracts() {
    let event = Event {
        sequence: 12,
        record: origin().record(
            EventType::DeckUpdated,
            "mtg",
            Some(Uuid::from_u128(7)),
            datetime!(2026-11-26 12:00:00.123456 UTC),
            json!({"version": 2, "changed": ["name"]}),
        ),
    };
    assert_eq!(
        event.to_json(),
        json!({
            "id": "00000000-0000-0000-0000-000000000063",
            "sequence": 12,
            "type": "deck.updated",
            "game": "mtg",
            "occurred_at": "2026-11-26T12:00:00.123456Z",
            "subject": {"kind": "deck", "id": "00000000-0000-0000-0000-000000000007"},
            "actor": {"user_id": "00000000-0000-0000-0000-000000000001", "partner": "acme"},
            "data": {"version": 2, "changed": ["name"]},
        })
    );
}
