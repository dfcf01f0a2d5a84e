//! The services over mocked ports: what is sealed, what is sent, what is skipped.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deckhand_auth::{SealingKey, WebhookSecret};
use time::macros::datetime;
use uuid::Uuid;

use super::ports::{
    ClaimedDelivery, MockAddressResolver, MockWebhookRepository, MockWebhookTransport,
    OutgoingWebhook, WebhookOwner,
};
use super::*;
use crate::events::ports::MockEventRepository;
use crate::events::{EventType, SubjectAccess};
use crate::identity::{GameScopes, PartnerRef, Scope, Scopes, Tier, UserId};
use crate::readable::Visibility;
use crate::system::{FixedClock, IdGenerator, Random, SystemPorts};

const KEY: [u8; 32] = [9; 32];
const NOW: time::OffsetDateTime = datetime!(2026-11-26 12:00 UTC);

struct Counter(Mutex<u128>);
impl IdGenerator for Counter {
    fn new_id(&self) -> Uuid {
        let mut next = self.0.lock().unwrap();
        *next += 1;
        Uuid::from_u128(*next)
    }
}
struct Bytes;
impl Random for Bytes {
    fn bytes32(&self) -> anyhow::Result<[u8; 32]> {
        Ok([5; 32])
    }
}

fn system() -> SystemPorts {
    SystemPorts {
        clock: Arc::new(FixedClock::at(NOW)),
        ids: Arc::new(Counter(Mutex::new(100))),
        random: Arc::new(Bytes),
        passwords: Arc::new(crate::system::InlinePasswordVerifier),
    }
}

fn partner() -> PartnerRef {
    PartnerRef {
        slug: "acme".into(),
        created_by: UserId(Uuid::from_u128(77)),
        game_scopes: GameScopes::Only(["mtg".to_owned()].into()),
        tier: Tier::partner(),
    }
}

fn owner(scopes: &[Scope]) -> WebhookOwner {
    WebhookOwner {
        created_by: UserId(Uuid::from_u128(77)),
        scopes: scopes.iter().copied().collect::<Scopes>(),
        game_scopes: GameScopes::Only(["mtg".to_owned()].into()),
        active: true,
    }
}

fn service(
    repository: MockWebhookRepository,
    events: MockEventRepository,
    resolver: MockAddressResolver,
    allow_private: bool,
) -> WebhookService {
    WebhookService::new(
        Arc::new(repository),
        Arc::new(events),
        Arc::new(resolver),
        system(),
        SealingKey(KEY),
        DeliveryPolicy {
            targets: TargetPolicy { allow_private },
            ..DeliveryPolicy::default()
        },
    )
}

fn resolving_to(address: &'static str) -> MockAddressResolver {
    let mut resolver = MockAddressResolver::new();
    resolver
        .expect_resolve()
        .returning(move |_, _| Ok(vec![address.parse::<IpAddr>().unwrap()]));
    resolver
}

fn draft(url: &str) -> EndpointDraft {
    EndpointDraft {
        url: Some(url.into()),
        ..EndpointDraft::default()
    }
}

#[test]
fn a_new_endpoint_shows_its_secret_once_and_stores_it_sealed() {
    let stored = Arc::new(Mutex::new(None));
    let mut repository = MockWebhookRepository::new();
    let keep = stored.clone();
    repository.expect_create().returning(move |endpoint| {
        *keep.lock().unwrap() = Some(endpoint.clone());
        Ok(())
    });
    let service = service(
        repository,
        MockEventRepository::new(),
        resolving_to("93.184.216.34"),
        false,
    );
    let (endpoint, secret) = futures_executor::block_on(
        service.create(&partner(), draft("https://hooks.example.com/in")),
    )
    .unwrap();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(endpoint.games.names(), ["mtg"]);
    assert_eq!(endpoint.types.names(), ["*"]);
    let stored = stored.lock().unwrap().clone().unwrap();
    let opened = deckhand_auth::open(
        &SealingKey(KEY),
        stored.id.0.as_bytes(),
        &stored.sealed_secret,
    )
    .unwrap();
    assert_eq!(
        WebhookSecret::parse(&secret).unwrap().as_bytes()[..],
        opened[..]
    );
    assert!(!format!("{stored:?}").contains(&secret));
}

#[test]
fn registration_refuses_private_targets_and_bad_fields() {
    let service = service(
        MockWebhookRepository::new(),
        MockEventRepository::new(),
        resolving_to("10.0.0.7"),
        false,
    );
    for (body, field) in [
        (draft("https://internal.example.com/"), "url"),
        (draft("http://hooks.example.com/"), "url"),
        (draft("https://127.0.0.1/"), "url"),
        (EndpointDraft::default(), "url"),
        (
            EndpointDraft {
                games: Some(vec!["pokemon".into()]),
                ..draft("https://10.0.0.7/")
            },
            "url",
        ),
    ] {
        match futures_executor::block_on(service.create(&partner(), body)) {
            Err(WebhookError::Invalid(violations)) => assert_eq!(violations.0[0].field, field),
            other => panic!("{other:?}"),
        }
    }
    let public = service_with_public_dns();
    for (body, field) in [
        (
            EndpointDraft {
                games: Some(vec!["pokemon".into()]),
                ..draft("https://hooks.example.com/")
            },
            "games",
        ),
        (
            EndpointDraft {
                types: Some(vec!["nope".into()]),
                ..draft("https://hooks.example.com/")
            },
            "types",
        ),
        (
            EndpointDraft {
                description: Some(Some("x".repeat(501))),
                ..draft("https://hooks.example.com/")
            },
            "description",
        ),
    ] {
        match futures_executor::block_on(public.create(&partner(), body)) {
            Err(WebhookError::Invalid(violations)) => assert_eq!(violations.0[0].field, field),
            other => panic!("{other:?}"),
        }
    }
}

fn service_with_public_dns() -> WebhookService {
    service(
        MockWebhookRepository::new(),
        MockEventRepository::new(),
        resolving_to("93.184.216.34"),
        false,
    )
}

#[test]
fn the_seventeenth_endpoint_is_refused() {
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_create()
        .returning(|_| Err(ports::CreateEndpointError::TooMany));
    let service = service(
        repository,
        MockEventRepository::new(),
        resolving_to("93.184.216.34"),
        false,
    );
    assert!(matches!(
        futures_executor::block_on(service.create(&partner(), draft("https://a.example/"))),
        Err(WebhookError::TooMany)
    ));
}

fn endpoint(service_key: &SealingKey, secret: &WebhookSecret, url: &str) -> Endpoint {
    let id = WebhookId(Uuid::from_u128(5));
    Endpoint {
        id,
        partner: "acme".into(),
        url: url.into(),
        types: TypeSelection::all(),
        games: GameSelection(GameScopes::All),
        description: None,
        enabled: true,
        disabled_reason: None,
        consecutive_failures: 0,
        sealed_secret: deckhand_auth::seal(
            service_key,
            [1; 12],
            id.0.as_bytes(),
            secret.as_bytes(),
        )
        .unwrap(),
        previous_secret: None,
        created_at: NOW,
    }
}

fn deck_delivery(endpoint: &Endpoint) -> Delivery {
    let event = crate::events::Event {
        sequence: 12,
        record: crate::events::EventRecord {
            id: crate::events::EventId(Uuid::from_u128(42)),
            event_type: EventType::DeckUpdated,
            game: "mtg".into(),
            occurred_at: NOW,
            subject_id: Some(Uuid::from_u128(43)),
            actor: crate::events::Actor::operator(),
            data: serde_json::json!({"version": 2, "changed": ["name"]}),
        },
    };
    Delivery::of_event(DeliveryId(Uuid::from_u128(44)), endpoint, &event, NOW)
}

fn readable_deck(visibility: Visibility, owner: u128) -> MockEventRepository {
    let mut events = MockEventRepository::new();
    events.expect_subject().returning(move |_, _| {
        Ok(Some(SubjectAccess {
            visibility,
            owner: UserId(Uuid::from_u128(owner)),
            is_archived: false,
        }))
    });
    events
}

#[test]
fn an_attempt_signs_with_both_secrets_during_a_rotation_and_records_the_answer() {
    let key = SealingKey(KEY);
    let new = WebhookSecret::from_bytes([1; 32]);
    let old = WebhookSecret::from_bytes([2; 32]);
    let mut endpoint = endpoint(&key, &new, "https://hooks.example.com/in");
    endpoint.previous_secret = Some((
        deckhand_auth::seal(&key, [2; 12], endpoint.id.0.as_bytes(), old.as_bytes()).unwrap(),
        NOW + time::Duration::hours(1),
    ));
    let delivery = deck_delivery(&endpoint);
    let recorded = Arc::new(Mutex::new(None));
    let mut repository = MockWebhookRepository::new();
    let keep = recorded.clone();
    repository.expect_record().returning(move |record| {
        *keep.lock().unwrap() = Some(record.clone());
        Ok(())
    });
    let service = service(
        repository,
        readable_deck(Visibility::Public, 1),
        resolving_to("93.184.216.34"),
        false,
    );
    let sent = Arc::new(Mutex::new(None::<OutgoingWebhook>));
    let mut transport = MockWebhookTransport::new();
    let keep = sent.clone();
    transport.expect_send().returning(move |request| {
        *keep.lock().unwrap() = Some(request);
        AttemptOutcome::Answered {
            status: 204,
            body: String::new(),
            duration: Duration::from_millis(3),
        }
    });
    let claimed = ClaimedDelivery {
        delivery: delivery.clone(),
        endpoint,
        owner: owner(&[Scope::DecksRead]),
    };
    let result = futures_executor::block_on(service.attempt(&transport, claimed)).unwrap();
    assert_eq!(result, DeliveryResult::Succeeded);
    let request = sent.lock().unwrap().clone().unwrap();
    assert_eq!(request.webhook_id, Uuid::from_u128(42).to_string());
    assert_eq!(request.timestamp, NOW.unix_timestamp());
    assert_eq!(request.addresses, ["93.184.216.34:443".parse().unwrap()]);
    assert_eq!(request.body, delivery.body);
    assert_eq!(
        request.signature,
        format!(
            "{} {}",
            new.sign(
                &request.webhook_id,
                request.timestamp,
                request.body.as_bytes()
            ),
            old.sign(
                &request.webhook_id,
                request.timestamp,
                request.body.as_bytes()
            )
        )
    );
    let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
    assert_eq!(body["type"], "deck.updated");
    assert_eq!(body["sequence"], 12);
    let record = recorded.lock().unwrap().clone().unwrap();
    assert_eq!(record.status, DeliveryStatus::Succeeded);
    assert_eq!(record.attempt, 1);
}

#[test]
fn an_event_the_partner_alone_may_not_read_is_discarded_not_sent() {
    let key = SealingKey(KEY);
    let endpoint = endpoint(
        &key,
        &WebhookSecret::from_bytes([1; 32]),
        "https://a.example/",
    );
    for (events, scopes) in [
        // Someone else's private deck.
        (
            readable_deck(Visibility::Private, 1),
            vec![Scope::DecksRead],
        ),
        // No deck scope.
        (
            readable_deck(Visibility::Public, 1),
            vec![Scope::SideboardsRead],
        ),
        // The deck is gone.
        (
            {
                let mut events = MockEventRepository::new();
                events.expect_subject().returning(|_, _| Ok(None));
                events
            },
            vec![Scope::DecksRead],
        ),
    ] {
        let mut repository = MockWebhookRepository::new();
        repository.expect_discard().times(1).returning(|_| Ok(()));
        let service = service(repository, events, MockAddressResolver::new(), false);
        let claimed = ClaimedDelivery {
            delivery: deck_delivery(&endpoint),
            endpoint: endpoint.clone(),
            owner: owner(&scopes),
        };
        let result =
            futures_executor::block_on(service.attempt(&MockWebhookTransport::new(), claimed));
        assert_eq!(result.unwrap(), DeliveryResult::Skipped);
    }
    // The partner's own private deck is its to read.
    let mut repository = MockWebhookRepository::new();
    repository.expect_record().returning(|_| Ok(()));
    let service = service(
        repository,
        readable_deck(Visibility::Private, 77),
        resolving_to("93.184.216.34"),
        false,
    );
    let mut transport = MockWebhookTransport::new();
    transport
        .expect_send()
        .times(1)
        .returning(|_| AttemptOutcome::Answered {
            status: 500,
            body: "down".into(),
            duration: Duration::from_millis(1),
        });
    let claimed = ClaimedDelivery {
        delivery: deck_delivery(&endpoint),
        endpoint,
        owner: owner(&[Scope::DecksRead]),
    };
    let result = futures_executor::block_on(service.attempt(&transport, claimed));
    assert_eq!(result.unwrap(), DeliveryResult::Retrying);
}

#[test]
fn a_host_that_now_resolves_to_a_private_address_is_not_sent_to() {
    let key = SealingKey(KEY);
    let endpoint = endpoint(
        &key,
        &WebhookSecret::from_bytes([1; 32]),
        "https://a.example/",
    );
    let recorded = Arc::new(Mutex::new(None));
    let mut repository = MockWebhookRepository::new();
    let keep = recorded.clone();
    repository.expect_record().returning(move |record| {
        *keep.lock().unwrap() = Some(record.clone());
        Ok(())
    });
    let service = service(
        repository,
        readable_deck(Visibility::Public, 1),
        resolving_to("127.0.0.1"),
        false,
    );
    let claimed = ClaimedDelivery {
        delivery: deck_delivery(&endpoint),
        endpoint,
        owner: owner(&[Scope::DecksRead]),
    };
    let result = futures_executor::block_on(service.attempt(&MockWebhookTransport::new(), claimed));
    assert_eq!(result.unwrap(), DeliveryResult::Retrying);
    let record = recorded.lock().unwrap().clone().unwrap();
    assert_eq!(record.response_status, None);
    assert!(record.error.unwrap().contains("not public"));
}

#[test]
fn fan_out_makes_one_delivery_per_wanting_endpoint_and_event() {
    let key = SealingKey(KEY);
    let secret = WebhookSecret::from_bytes([1; 32]);
    let mut only_guides = endpoint(&key, &secret, "https://a.example/");
    only_guides.id = WebhookId(Uuid::from_u128(6));
    only_guides.types = TypeSelection::parse(&["sideboard_guide.*".into()]).unwrap();
    let mut disabled = endpoint(&key, &secret, "https://a.example/");
    disabled.enabled = false;
    let mut other_game = endpoint(&key, &secret, "https://a.example/");
    other_game.games = GameSelection(GameScopes::Only(["lorcana".to_owned()].into()));
    let every = endpoint(&key, &secret, "https://a.example/");
    let event = |sequence, event_type| crate::events::Event {
        sequence,
        record: crate::events::EventRecord {
            id: crate::events::EventId(Uuid::from_u128(sequence as u128)),
            event_type,
            game: "mtg".into(),
            occurred_at: NOW,
            subject_id: Some(Uuid::from_u128(1)),
            actor: crate::events::Actor::operator(),
            data: serde_json::json!({}),
        },
    };
    let events = [
        event(1, EventType::DeckCreated),
        event(2, EventType::GuideCreated),
    ];
    let mut next = 0;
    let deliveries = fan_out(
        &events,
        &[only_guides.clone(), disabled, other_game, every.clone()],
        NOW,
        || {
            next += 1;
            DeliveryId(Uuid::from_u128(next))
        },
    );
    let pairs: Vec<(WebhookId, Option<i64>)> = deliveries
        .iter()
        .map(|delivery| (delivery.endpoint, delivery.sequence))
        .collect();
    assert_eq!(
        pairs,
        [
            (every.id, Some(1)),
            (only_guides.id, Some(2)),
            (every.id, Some(2))
        ]
    );
    assert!(
        deliveries
            .iter()
            .all(|delivery| delivery.next_attempt_at == Some(NOW)
                && delivery.status == DeliveryStatus::Pending)
    );
}

#[test]
fn a_ping_is_queued_for_the_endpoint_without_a_sequence() {
    let key = SealingKey(KEY);
    let found = endpoint(
        &key,
        &WebhookSecret::from_bytes([1; 32]),
        "https://a.example/",
    );
    let endpoint_id = found.id;
    let queued = Arc::new(Mutex::new(None));
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_find()
        .returning(move |_, _| Ok(Some(found.clone())));
    let keep = queued.clone();
    repository
        .expect_enqueue_ping()
        .times(1)
        .returning(move |delivery| {
            *keep.lock().unwrap() = Some(delivery.clone());
            Ok(delivery.clone())
        });
    let service = service(
        repository,
        MockEventRepository::new(),
        MockAddressResolver::new(),
        false,
    );
    let answered =
        futures_executor::block_on(service.ping(&partner(), WebhookId(Uuid::from_u128(5))))
            .unwrap();
    let delivery = queued.lock().unwrap().clone().unwrap();
    assert_eq!(answered, delivery);
    assert_eq!(delivery.event_type, EventType::WebhookPing);
    assert_eq!(delivery.sequence, None);
    assert_eq!(delivery.next_attempt_at, Some(NOW));
    // The body the contract gives a ping: no sequence, no game, the endpoint as its subject.
    let body: serde_json::Value = serde_json::from_str(&delivery.body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({
            "id": delivery.event_id.0,
            "sequence": null,
            "type": "webhook.ping",
            "game": null,
            "occurred_at": "2026-11-26T12:00:00Z",
            "subject": {"kind": "webhook", "id": endpoint_id.0},
            "actor": {"user_id": null, "partner": "acme"},
            "data": {},
        })
    );
}

#[test]
fn a_ping_while_one_is_pending_answers_with_the_pending_one() {
    let key = SealingKey(KEY);
    let found = endpoint(
        &key,
        &WebhookSecret::from_bytes([1; 32]),
        "https://a.example/",
    );
    let pending = Delivery::ping(
        DeliveryId(Uuid::from_u128(1)),
        crate::events::EventId(Uuid::from_u128(2)),
        &found,
        "acme",
        NOW - time::Duration::seconds(3),
    );
    let mut repository = MockWebhookRepository::new();
    repository
        .expect_find()
        .returning(move |_, _| Ok(Some(found.clone())));
    let stored = pending.clone();
    repository
        .expect_enqueue_ping()
        .times(1)
        .returning(move |_| Ok(stored.clone()));
    let service = service(
        repository,
        MockEventRepository::new(),
        MockAddressResolver::new(),
        false,
    );
    let answered =
        futures_executor::block_on(service.ping(&partner(), WebhookId(Uuid::from_u128(5))))
            .unwrap();
    assert_eq!(answered, pending);
}

/// The deck a fork's or a guide's event names (`forked_from`, `deck_id`) is `null` in the body
/// sent when the partner alone may not read that deck at delivery time; when it may, the body
/// goes out byte for byte as fanned out.
#[test]
fn a_named_deck_the_partner_may_not_read_is_null_in_the_body_sent() {
    let key = SealingKey(KEY);
    let endpoint = endpoint(
        &key,
        &WebhookSecret::from_bytes([1; 32]),
        "https://a.example/",
    );
    let fork = Uuid::from_u128(43);
    let source = Uuid::from_u128(50);
    let guide = Uuid::from_u128(60);
    let event = |event_type, subject, data| crate::events::Event {
        sequence: 12,
        record: crate::events::EventRecord {
            id: crate::events::EventId(Uuid::from_u128(42)),
            event_type,
            game: "mtg".into(),
            occurred_at: NOW,
            subject_id: Some(subject),
            actor: crate::events::Actor::operator(),
            data,
        },
    };
    let forked = event(
        EventType::DeckCreated,
        fork,
        serde_json::json!({"version": 1, "forked_from": {"deck_id": source, "version": 3}}),
    );
    let attached = event(
        EventType::GuideDeckAttached,
        guide,
        serde_json::json!({"deck_id": source}),
    );
    for (event, field, scopes) in [
        (&forked, "forked_from", vec![Scope::DecksRead]),
        (
            &attached,
            "deck_id",
            vec![Scope::DecksRead, Scope::SideboardsRead],
        ),
    ] {
        for (source_owner, source_visibility, hidden) in [
            // Someone else's private deck: hidden.
            (1, Visibility::Private, true),
            // Public, or the partner's own private deck: shown.
            (1, Visibility::Public, false),
            (77, Visibility::Private, false),
        ] {
            let delivery =
                Delivery::of_event(DeliveryId(Uuid::from_u128(44)), &endpoint, event, NOW);
            let mut events = MockEventRepository::new();
            events.expect_subject().returning(move |_, id| {
                Ok(Some(if id == source {
                    SubjectAccess {
                        visibility: source_visibility,
                        owner: UserId(Uuid::from_u128(source_owner)),
                        is_archived: false,
                    }
                } else {
                    SubjectAccess {
                        visibility: Visibility::Public,
                        owner: UserId(Uuid::from_u128(1)),
                        is_archived: false,
                    }
                }))
            });
            let mut repository = MockWebhookRepository::new();
            repository.expect_record().times(1).returning(|_| Ok(()));
            let sent = Arc::new(Mutex::new(None::<OutgoingWebhook>));
            let mut transport = MockWebhookTransport::new();
            let keep = sent.clone();
            transport.expect_send().times(1).returning(move |request| {
                *keep.lock().unwrap() = Some(request);
                AttemptOutcome::Answered {
                    status: 204,
                    body: String::new(),
                    duration: Duration::from_millis(1),
                }
            });
            let service = service(repository, events, resolving_to("93.184.216.34"), false);
            let claimed = ClaimedDelivery {
                delivery: delivery.clone(),
                endpoint: endpoint.clone(),
                owner: owner(&scopes),
            };
            let result = futures_executor::block_on(service.attempt(&transport, claimed));
            assert_eq!(result.unwrap(), DeliveryResult::Succeeded);
            let request = sent.lock().unwrap().clone().unwrap();
            let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
            let what = format!("{field} of a deck of {source_owner}, {source_visibility:?}");
            if hidden {
                let mut expected: serde_json::Value = serde_json::from_str(&delivery.body).unwrap();
                expected["data"][field] = serde_json::Value::Null;
                assert_eq!(body, expected, "{what}");
            } else {
                assert_eq!(request.body, delivery.body, "{what}");
            }
            // The signature is over the bytes sent.
            let secret = WebhookSecret::from_bytes([1; 32]);
            assert_eq!(
                request.signature,
                secret.sign(
                    &request.webhook_id,
                    request.timestamp,
                    request.body.as_bytes()
                ),
                "{what}"
            );
        }
    }
}

#[test]
fn a_worker_attempts_its_claim_again_only_while_the_lease_surely_holds() {
    let policy = DeliveryPolicy {
        timeout: Duration::from_secs(10),
        ..DeliveryPolicy::default()
    };
    // The lease is 50 s: an attempt started by 10 s ends, lookup and record included, in it.
    assert_eq!(policy.lease(), Duration::from_secs(50));
    assert!(policy.may_attempt_again(Duration::from_secs(1)));
    assert!(policy.may_attempt_again(Duration::from_secs(10)));
    assert!(!policy.may_attempt_again(Duration::from_secs(11)));
}
