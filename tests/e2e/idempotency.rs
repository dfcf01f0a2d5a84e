//! `Idempotency-Key` on the creating POSTs (decks, sideboard guides, matchups, rollback), on
//! both stores; the concurrent case and a replay from a second instance on PostgreSQL.

use deckhand_domain::idempotency::{Fingerprint, IdempotencyKey};
use deckhand_domain::identity::{Principal, Scopes, UserId, UserLookup};
use deckhand_testkit::app::TestApp;
use reqwest::header::HeaderMap;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::support::assert_envelope;

const SCOPES: &str = "decks:read decks:write sideboards:read sideboards:write";

/// Status, headers and raw body bytes (a replay must repeat them exactly).
async fn send_raw(request: RequestBuilder) -> (StatusCode, HeaderMap, Vec<u8>) {
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.bytes().await.unwrap().to_vec())
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

fn replayed(headers: &HeaderMap) -> bool {
    headers
        .get("idempotent-replayed")
        .is_some_and(|value| value == "true")
}

/// How many decks `token`'s user has (every visibility).
async fn deck_count(app: &TestApp, token: &str, author: &str) -> u64 {
    let response = app
        .client
        .get(app.api(&format!("/games/mtg/decks?authorId={author}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    response.json::<Value>().await.unwrap()["pagination"]["total"]
        .as_u64()
        .unwrap()
}

fn create_deck(app: &TestApp, token: &str, key: &str, body: &Value) -> RequestBuilder {
    app.client
        .post(app.api("/games/mtg/decks"))
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .json(body)
}

async fn a_repeat_with_the_same_key_replays_and_changes_nothing(app: TestApp) {
    let (alice_id, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let body = json!({"name": "Mirrored", "visibility": ["public"],
        "cards": [{"section": "mainboard", "quantity": 4, "name": "Siege Wurm"}]});

    let (status, first_headers, first) = send_raw(create_deck(&app, &alice, "sync-1", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{}", json_of(&first));
    assert!(!replayed(&first_headers));
    let (status, headers, again) = send_raw(create_deck(&app, &alice, "sync-1", &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(replayed(&headers));
    assert_eq!(again, first, "the stored body, byte for byte");
    assert_eq!(headers["etag"], first_headers["etag"]);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(deck_count(&app, &alice, &alice_id).await, 1);

    // The same key with another body: refused, naming the header; nothing created.
    let mut other = body.clone();
    other["name"] = json!("Another");
    let (status, _, refused) = send_raw(create_deck(&app, &alice, "sync-1", &other)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let details = assert_envelope(&json_of(&refused), "SERVICE_VALIDATION_ERROR");
    assert_eq!(details["fields"][0]["field"], "Idempotency-Key");
    // ... and on another path.
    let (status, _, _) = send_raw(
        app.client
            .post(app.api("/games/mtg/sideboard-guides"))
            .bearer_auth(&alice)
            .header("Idempotency-Key", "sync-1")
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(deck_count(&app, &alice, &alice_id).await, 1);

    // Keys are the caller's: bob's "sync-1" is his own.
    let (status, headers, bobs) = send_raw(create_deck(&app, &bob, "sync-1", &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(!replayed(&headers));
    assert_ne!(json_of(&bobs)["id"], json_of(&first)["id"]);

    // Without a key, every POST creates.
    for _ in 0..2 {
        let (status, _, _) = send_raw(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&alice)
                .json(&body),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    assert_eq!(deck_count(&app, &alice, &alice_id).await, 3);

    // A refusal by the operation is kept too: the retry learns the same outcome.
    let invalid = json!({"name": ""});
    let (status, _, refused) = send_raw(create_deck(&app, &alice, "bad-1", &invalid)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, headers, again) = send_raw(create_deck(&app, &alice, "bad-1", &invalid)).await;
    assert_eq!(
        (status, replayed(&headers)),
        (StatusCode::BAD_REQUEST, true)
    );
    assert_eq!(again, refused);

    // Answers that mean the operation never ran are not kept: a read-only token's 403
    // leaves the key free for the same user with the right scope.
    let read_only = app
        .admin(&["pat", "create", "--user", "alice", "--scopes", "decks:read"])
        .await
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _, _) = send_raw(create_deck(&app, &read_only, "scoped", &body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, headers, _) = send_raw(create_deck(&app, &alice, "scoped", &body)).await;
    assert_eq!((status, replayed(&headers)), (StatusCode::CREATED, false));

    // Anonymous callers have nothing to scope a key to: the operation's 401.
    let (status, _, anonymous) = send_raw(
        app.client
            .post(app.api("/games/mtg/decks"))
            .header("Idempotency-Key", "anon")
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&json_of(&anonymous), "SERVICE_AUTHENTICATION_REQUIRED");
}

#[tokio::test]
async fn replays_on_memory() {
    a_repeat_with_the_same_key_replays_and_changes_nothing(TestApp::memory().await).await;
}

#[tokio::test]
async fn replays_on_postgres() {
    a_repeat_with_the_same_key_replays_and_changes_nothing(TestApp::postgres().await).await;
}

async fn keys_must_be_1_to_255_printable_ascii_characters(app: TestApp) {
    let (alice_id, alice) = app.user_with_token("alice", SCOPES).await;
    let body = json!({"name": "Keyed"});
    let long = "k".repeat(256);
    for (key, code) in [
        (&b""[..], "length"),
        (long.as_bytes(), "length"),
        (&b"caf\xc3\xa9"[..], "invalid"),
        (&b"tab\tkey"[..], "invalid"),
    ] {
        let (status, _, refused) = send_raw(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&alice)
                .header(
                    "Idempotency-Key",
                    reqwest::header::HeaderValue::from_bytes(key).unwrap(),
                )
                .json(&body),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{key:?}");
        let details = assert_envelope(&json_of(&refused), "SERVICE_VALIDATION_ERROR");
        assert_eq!(
            (
                details["fields"][0]["field"].as_str(),
                details["fields"][0]["code"].as_str()
            ),
            (Some("Idempotency-Key"), Some(code)),
            "{key:?}"
        );
    }
    let longest = "k".repeat(255);
    let (status, _, _) = send_raw(create_deck(&app, &alice, &longest, &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(deck_count(&app, &alice, &alice_id).await, 1);
}

#[tokio::test]
async fn key_syntax_on_memory() {
    keys_must_be_1_to_255_printable_ascii_characters(TestApp::memory().await).await;
}

#[tokio::test]
async fn key_syntax_on_postgres() {
    keys_must_be_1_to_255_printable_ascii_characters(TestApp::postgres().await).await;
}

/// Guides, matchups and rollbacks replay too, and a rollback replay adds no version.
async fn every_creating_post_takes_a_key(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, _, deck) = send_raw(create_deck(&app, &alice, "deck", &json!({"name": "Base"}))).await;
    let deck = json_of(&deck)["id"].as_str().unwrap().to_owned();
    let deck_url = app.api(&format!("/games/mtg/decks/{deck}"));
    let (status, _, _) = send_raw(
        app.client
            .patch(&deck_url)
            .bearer_auth(&alice)
            .json(&json!({"name": "Renamed"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // Each operation under a key of its own (one key is one intended operation).
    let twice = |url: String, body: Value| {
        let (client, alice) = (app.client.clone(), alice.clone());
        async move {
            let request = || {
                client
                    .post(&url)
                    .bearer_auth(&alice)
                    .header("Idempotency-Key", format!("once {url}"))
                    .json(&body)
            };
            let (status, first_headers, first) = send_raw(request()).await;
            let (again_status, headers, again) = send_raw(request()).await;
            assert_eq!(again_status, status);
            assert!(!replayed(&first_headers) && replayed(&headers));
            assert_eq!(again, first);
            assert_eq!(headers.get("etag"), first_headers.get("etag"));
            (status, json_of(&first))
        }
    };
    let (status, rolled) =
        twice(format!("{deck_url}/rollback"), json!({"version_number": 1})).await;
    assert_eq!(
        (status, rolled["version"].clone()),
        (StatusCode::OK, json!(3))
    );
    let versions: Value = app
        .client
        .get(format!("{deck_url}/versions"))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        versions.as_array().unwrap().len(),
        3,
        "one rollback, not two"
    );

    let (status, guide) = twice(
        app.api("/games/mtg/sideboard-guides"),
        json!({"name": "Plan", "deck_id": deck}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{guide}");
    let guide = guide["id"].as_str().unwrap().to_owned();
    let matchups = app.api(&format!("/games/mtg/sideboard-guides/{guide}/matchups"));
    let (status, _) = twice(matchups.clone(), json!({"opponent_deck_name": "Elves"})).await;
    assert_eq!(status, StatusCode::CREATED);
    let detail: Value = app
        .client
        .get(app.api(&format!("/games/mtg/sideboard-guides/{guide}")))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(detail["matchups"].as_array().unwrap().len(), 1);
    let guides: Value = app
        .client
        .get(app.api("/games/mtg/sideboard-guides/my"))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(guides["pagination"]["total"], 1);
}

#[tokio::test]
async fn every_creating_post_on_memory() {
    every_creating_post_takes_a_key(TestApp::memory().await).await;
}

#[tokio::test]
async fn every_creating_post_on_postgres() {
    every_creating_post_takes_a_key(TestApp::postgres().await).await;
}

/// While the first request with a key runs, a repeat is a 409 `in_progress`.
async fn a_repeat_while_the_first_runs_is_in_progress(app: TestApp) {
    let (alice_id, alice) = app.user_with_token("alice", SCOPES).await;
    let body = json!({"name": "Slow"});
    // Hold the key as a first request still running would (claimed, not finished).
    let user = app
        .services
        .identity
        .find_user(&UserLookup::Id(UserId(alice_id.parse().unwrap())))
        .await
        .unwrap();
    let principal = Principal::personal_access_token(&user, Scopes::parse_list(SCOPES).unwrap());
    let fingerprint = Fingerprint::of(
        "POST",
        "/api/public/v1/games/mtg/decks",
        serde_json::to_vec(&body).unwrap().as_slice(),
    );
    let running = app
        .services
        .idempotency
        .begin(
            &principal,
            IdempotencyKey::parse(b"slow").unwrap(),
            fingerprint,
        )
        .await
        .unwrap();
    assert!(matches!(
        running,
        deckhand_domain::idempotency::Begin::Run(_)
    ));

    let (status, headers, refused) = send_raw(create_deck(&app, &alice, "slow", &body)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(headers["retry-after"], "1");
    let details = assert_envelope(&json_of(&refused), "SERVICE_VALIDATION_ERROR");
    assert_eq!(details["reason"], "in_progress");
    assert_eq!(deck_count(&app, &alice, &alice_id).await, 0);
}

#[tokio::test]
async fn in_progress_on_memory() {
    a_repeat_while_the_first_runs_is_in_progress(TestApp::memory().await).await;
}

#[tokio::test]
async fn in_progress_on_postgres() {
    a_repeat_while_the_first_runs_is_in_progress(TestApp::postgres().await).await;
}

/// Simultaneous first requests with one key, spread over two instances on one database:
/// one creates; every other gets the replay or a 409 `in_progress`; never two creates.
#[tokio::test]
async fn concurrent_first_requests_create_once_across_instances_on_postgres() {
    let app = TestApp::postgres().await;
    let second = app.another_instance().await;
    let (alice_id, alice) = app.user_with_token("alice", SCOPES).await;
    let body = json!({"name": "Raced", "visibility": ["public"]});
    for round in 0..3 {
        let key = format!("race-{round}");
        let requests = (0..6).map(|index| {
            let instance = if index % 2 == 0 { &app } else { &second };
            send_raw(create_deck(instance, &alice, &key, &body))
        });
        let answers = futures_util::future::join_all(requests).await;
        let mut ids = Vec::new();
        for (status, headers, bytes) in &answers {
            match *status {
                StatusCode::CREATED => ids.push(json_of(bytes)["id"].clone()),
                StatusCode::CONFLICT => {
                    assert!(!replayed(headers));
                    let details = assert_envelope(&json_of(bytes), "SERVICE_VALIDATION_ERROR");
                    assert_eq!(details["reason"], "in_progress");
                }
                other => panic!("unexpected {other}: {}", json_of(bytes)),
            }
        }
        ids.dedup();
        assert_eq!(
            ids.len(),
            1,
            "one deck, replayed to the others: {answers:?}"
        );
        assert_eq!(deck_count(&app, &alice, &alice_id).await, round + 1);
    }

    // A replay from the other instance: the store is what remembers.
    let (status, _, first) = send_raw(create_deck(&app, &alice, "handoff", &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, headers, again) = send_raw(create_deck(&second, &alice, "handoff", &body)).await;
    assert_eq!((status, replayed(&headers)), (StatusCode::CREATED, true));
    assert_eq!(again, first);
    assert_eq!(deck_count(&second, &alice, &alice_id).await, 4);
}
