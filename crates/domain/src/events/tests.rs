//! The event rules without a store: which change makes which event, who reads what, and how a
//! page of the feed ends.

use serde_json::json;
use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

use super::ports::MockEventRepository;
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
        readable: readable
            .into_iter()
            .map(|sequence| ReadableEvent {
                event: event(sequence),
                named: None,
            })
            .collect(),
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

fn public_of(owner: UserId) -> SubjectAccess {
    SubjectAccess {
        visibility: Visibility::Public,
        owner,
        is_archived: false,
    }
}

fn private_of(owner: UserId) -> SubjectAccess {
    SubjectAccess {
        visibility: Visibility::Private,
        owner,
        is_archived: false,
    }
}

fn fork_of(source: Uuid, sequence: i64) -> Event {
    Event {
        sequence,
        record: origin().record(
            EventType::DeckCreated,
            "mtg",
            Some(Uuid::from_u128(50)),
            NOW,
            json!({"version": 1, "forked_from": {"deck_id": source, "version": 3}}),
        ),
    }
}

#[test]
fn an_id_inside_data_is_null_to_a_reader_who_may_not_read_that_deck_now() {
    let source = Uuid::from_u128(60);
    let fork = fork_of(source, 4);
    assert_eq!(fork.record.named_deck(), Some(source));
    let hidden = ReadableEvent {
        event: fork.clone(),
        named: Some(private_of(owner())),
    };
    let seen = hidden.clone().seen_by(reader(stranger(), "decks:read"));
    assert_eq!(seen.record.data, json!({"version": 1, "forked_from": null}));
    // The source's owner still sees it, as does anyone once it is public; a gone source is null.
    let own = hidden.seen_by(reader(owner(), "decks:read"));
    assert_eq!(own.record.data, fork.record.data);
    let public = ReadableEvent {
        event: fork.clone(),
        named: Some(public_of(owner())),
    };
    assert_eq!(
        public.seen_by(reader(stranger(), "decks:read")).record.data,
        fork.record.data
    );
    let gone = ReadableEvent {
        event: fork,
        named: None,
    };
    assert_eq!(
        gone.seen_by(reader(owner(), "decks:read")).record.data,
        json!({"version": 1, "forked_from": null})
    );
    // A guide's deck.
    let guide = Event {
        sequence: 5,
        record: origin().record(
            EventType::GuideCreated,
            "mtg",
            Some(Uuid::from_u128(70)),
            NOW,
            json!({"deck_id": source}),
        ),
    };
    assert_eq!(guide.record.named_deck(), Some(source));
    let seen = ReadableEvent {
        event: guide,
        named: Some(private_of(owner())),
    }
    .seen_by(reader(stranger(), "sideboards:read"));
    assert_eq!(seen.record.data, json!({"deck_id": null}));
    // Events that name no deck are left as they are.
    assert_eq!(event(3).record.named_deck(), None);
}

fn partner_principal(slug: &str) -> Principal {
    Principal {
        lane: Lane::PartnerApiKey,
        user: None,
        partner: Some(PartnerRef {
            slug: slug.into(),
            created_by: owner(),
            game_scopes: GameScopes::All,
            tier: Tier::partner(),
        }),
        scopes: scopes("decks:read"),
    }
}

#[test]
fn a_caller_holds_at_most_its_share_of_waits_and_the_instance_at_most_its_limit() {
    let room = std::sync::Arc::new(WaitRoom::new(WaitLimits {
        per_caller: 2,
        per_instance: 3,
    }));
    let alice = Waiter::User(owner());
    let first = room.admit(alice.clone()).expect("first");
    let second = room.admit(alice.clone()).expect("second");
    assert!(room.admit(alice.clone()).is_none(), "a third of one caller");
    let partner = Waiter::of(&partner_principal("acme")).unwrap();
    let third = room.admit(partner.clone()).expect("another caller");
    assert!(
        room.admit(Waiter::User(stranger())).is_none(),
        "past the instance's limit"
    );
    assert_eq!(room.held(), 3);
    // A wait that ends (answered, or its client gone) gives its place back.
    drop(first);
    assert_eq!(room.held(), 2);
    let again = room.admit(alice).expect("alice again");
    drop((second, third, again));
    assert_eq!(room.held(), 0);
}

fn judged(event: Event, subject: Option<SubjectAccess>) -> JudgedEvent {
    JudgedEvent {
        event,
        subject,
        named: None,
    }
}

fn deck_event(sequence: i64, game: &str, event_type: EventType) -> Event {
    Event {
        sequence,
        record: origin().record(
            event_type,
            game,
            Some(Uuid::from_u128(40)),
            NOW,
            json!({"version": 2, "changed": ["name"]}),
        ),
    }
}

/// A store that answers `judged` from a fixed list and counts how often it is asked.
fn counting_store(
    events: Vec<JudgedEvent>,
) -> (
    MockEventRepository,
    std::sync::Arc<std::sync::atomic::AtomicU32>,
) {
    let reads = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = reads.clone();
    let mut store = MockEventRepository::new();
    store.expect_judged().returning(move |after, through| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(events
            .iter()
            .filter(|judged| judged.event.sequence > after && judged.event.sequence <= through)
            .cloned()
            .collect())
    });
    (store, reads)
}

#[test]
fn waits_woken_by_one_news_share_one_read_and_each_sees_only_its_own() {
    let events = vec![
        judged(
            deck_event(11, "mtg", EventType::DeckUpdated),
            Some(private_of(owner())),
        ),
        judged(
            deck_event(12, "other", EventType::DeckUpdated),
            Some(public_of(owner())),
        ),
        judged(
            deck_event(13, "mtg", EventType::DeckRolledBack),
            Some(public_of(owner())),
        ),
    ];
    let (store, reads) = counting_store(events);
    let room = WaitRoom::new(WaitLimits::default());
    let feed = |reader: FeedReader, types: TypeFilter| FeedQuery {
        game: "mtg".into(),
        after: Some(Cursor { sequence: 10 }),
        types,
        limit: 10,
        reader,
    };
    let sequences =
        |page: FeedPage| -> Vec<i64> { page.events.iter().map(|event| event.sequence).collect() };
    futures_executor::block_on(async {
        let mut pages = Vec::new();
        for (reader, types) in [
            (reader(owner(), "decks:read"), TypeFilter::all()),
            (reader(stranger(), "decks:read"), TypeFilter::all()),
            (
                reader(owner(), "decks:read"),
                TypeFilter::parse("deck.updated").unwrap(),
            ),
            (reader(stranger(), "sideboards:read"), TypeFilter::all()),
        ] {
            let batch = room.batch(&store, 10, 13, NOW).await.unwrap().unwrap();
            pages.push(batch.page(&feed(reader, types)).unwrap());
        }
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "one read for all"
        );
        let [owner_all, stranger_all, owner_updates, no_scope] = pages.try_into().unwrap();
        assert_eq!(sequences(owner_all.clone()), [11, 13]);
        assert_eq!(
            sequences(stranger_all.clone()),
            [13],
            "the private deck's event is hidden"
        );
        assert_eq!(sequences(owner_updates), [11]);
        assert_eq!(sequences(no_scope.clone()), Vec::<i64>::new());
        // Every page ends past everything the news covered.
        for page in [owner_all, stranger_all, no_scope] {
            assert_eq!((page.has_more, page.next), (false, Cursor { sequence: 13 }));
        }
        // News past what was read is read once more.
        room.batch(&store, 11, 13, NOW).await.unwrap();
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "already covered"
        );
        // Later news is read from where the batch ends, and only that part.
        let more = room.batch(&store, 13, 14, NOW).await.unwrap();
        assert!(more.is_none(), "14 is not in the store: {more:?}");
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 2);
        // A batch older than its freshness is read again.
        let later = NOW + BATCH_FRESH_FOR;
        room.batch(&store, 10, 13, later).await.unwrap().unwrap();
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 3);
    });
}

#[test]
fn a_batch_the_store_shows_only_in_part_is_not_used() {
    // A replica behind the news shows 11 but not 12: the wait reads the feed itself.
    let (store, _) = counting_store(vec![judged(
        deck_event(11, "mtg", EventType::DeckUpdated),
        Some(public_of(owner())),
    )]);
    let room = WaitRoom::new(WaitLimits::default());
    futures_executor::block_on(async {
        assert!(room.batch(&store, 10, 12, NOW).await.unwrap().is_none());
        assert!(
            room.batch(&store, 10, 10 + i64::from(FEED_SCAN_WINDOW) + 1, NOW)
                .await
                .unwrap()
                .is_none()
        );
    });
}
