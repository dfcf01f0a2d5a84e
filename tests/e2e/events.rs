//! The events feed over HTTP, on both stores: who sees which events (scopes, visibility judged
//! at read time), the event's shape, paging with the cursor, the filters and their errors,
//! a long poll woken by a write, and a cursor past retention.

use std::sync::Arc;
use std::time::{Duration, Instant};

use deckhand_domain::ports::FixedClock;
use deckhand_testkit::app::{Store, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const ALL: &str = "decks:read decks:write sideboards:read sideboards:write";

async fn create_deck(app: &TestApp, token: &str, name: &str, visibility: &str) -> String {
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(token)
            .json(&json!({"name": name, "visibility": [visibility]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

async fn patch_deck(app: &TestApp, token: &str, id: &str, body: Value) {
    let (status, _, answer) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

/// A page of the feed as `token` reads it with `query`.
async fn feed(app: &TestApp, token: &str, query: &str) -> (StatusCode, Value) {
    let (status, _, body) = send(
        app.client
            .get(app.api(&format!("/games/mtg/events{query}")))
            .bearer_auth(token),
    )
    .await;
    (status, body)
}

/// The (type, subject id) of each deck or guide event of a page (the bundled catalogs' imports,
/// which every caller sees, left out).
fn listed(page: &Value) -> Vec<(String, String)> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["type"] != "catalog.imported")
        .map(|event| {
            (
                event["type"].as_str().unwrap().to_owned(),
                event["subject"]["id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn pair(kind: &str, id: &str) -> (String, String) {
    (kind.to_owned(), id.to_owned())
}

async fn the_feed_lists_what_each_caller_may_read_now(app: TestApp) {
    let (alice_id, alice) = app.user_with_token("alice", ALL).await;
    let (_, bob) = app.user_with_token("bob", "decks:read").await;
    let (_, guides_only) = app.user_with_token("carol", "sideboards:read").await;

    let (status, _, body) = send(app.client.get(app.api("/games/mtg/events"))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");

    let open = create_deck(&app, &alice, "Open", "public").await;
    let hidden = create_deck(&app, &alice, "Hidden", "private").await;
    patch_deck(
        &app,
        &alice,
        &open,
        json!({"name": "Open 2", "legal": true}),
    )
    .await;

    let (status, page) = feed(&app, &alice, "?types=deck.*").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(
        listed(&page),
        [
            pair("deck.created", &open),
            pair("deck.created", &hidden),
            pair("deck.updated", &open)
        ]
    );
    let update = &page["data"][2];
    assert_eq!(update["game"], "mtg");
    assert_eq!(update["subject"]["kind"], "deck");
    assert_eq!(
        update["actor"],
        json!({"user_id": alice_id, "partner": null})
    );
    assert_eq!(
        update["data"],
        json!({"version": 2, "changed": ["legal", "name"]})
    );
    assert!(update["sequence"].as_i64().unwrap() > page["data"][1]["sequence"].as_i64().unwrap());
    assert!(update["occurred_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(page["has_more"], false);

    let (_, seen_by_bob) = feed(&app, &bob, "").await;
    assert_eq!(
        listed(&seen_by_bob),
        [pair("deck.created", &open), pair("deck.updated", &open)]
    );
    let (status, seen_without_scope) = feed(&app, &guides_only, "").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a missing scope filters, never refuses"
    );
    assert!(listed(&seen_without_scope).is_empty());

    // Paging: one at a time, then an empty page keeps its cursor.
    let (_, first) = feed(&app, &alice, "?limit=1&types=deck.*").await;
    assert_eq!(listed(&first), [pair("deck.created", &open)]);
    assert_eq!(first["has_more"], true);
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let (_, rest) = feed(&app, &alice, &format!("?after={cursor}&types=deck.*")).await;
    assert_eq!(listed(&rest), listed(&page)[1..]);
    let end = rest["next_cursor"].as_str().unwrap().to_owned();
    let (_, nothing) = feed(&app, &alice, &format!("?after={end}")).await;
    assert!(listed(&nothing).is_empty());
    assert_eq!(
        (nothing["next_cursor"].as_str(), &nothing["has_more"]),
        (Some(end.as_str()), &json!(false))
    );

    let (_, updates) = feed(&app, &alice, "?types=deck.updated,catalog.*").await;
    assert_eq!(listed(&updates), [pair("deck.updated", &open)]);
    for (query, field) in [
        ("?types=deck.deleted", "types"),
        ("?after=not-a-cursor", "after"),
        ("?limit=0", "limit"),
        ("?limit=101", "limit"),
        ("?wait=31", "wait"),
    ] {
        let (status, body) = feed(&app, &alice, query).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], field, "{query}");
    }

    // A fork's deck.created names its source.
    let (status, _, fork) = send(
        app.client
            .post(app.api(&format!("/games/mtg/decks/{open}/fork")))
            .bearer_auth(&alice)
            .json(&json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    let (_, created) = feed(&app, &alice, &format!("?after={end}&types=deck.created")).await;
    assert_eq!(
        listed(&created),
        [pair("deck.created", fork["id"].as_str().unwrap())]
    );
    assert_eq!(
        created["data"][0]["data"],
        json!({"version": 1, "forked_from": {"deck_id": open, "version": 2}})
    );

    // Visibility is judged at read time: once private, the deck's old events are gone for bob.
    patch_deck(&app, &alice, &open, json!({"visibility": ["private"]})).await;
    let (_, later) = feed(&app, &bob, "").await;
    assert!(listed(&later).is_empty(), "{later}");
}

async fn a_long_poll_answers_when_a_readable_event_commits(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", ALL).await;
    let (_, bob) = app.user_with_token("bob", "decks:read").await;
    create_deck(&app, &alice, "Before", "public").await;
    let (_, page) = feed(&app, &bob, "").await;
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();

    let started = Instant::now();
    let waiting = {
        let request = app
            .client
            .get(app.api(&format!("/games/mtg/events?after={cursor}&wait=20")))
            .bearer_auth(&bob);
        tokio::spawn(send(request))
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A private deck wakes the reader, who finds nothing readable and waits on.
    create_deck(&app, &alice, "Secret", "private").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "answered with nothing readable");
    let news = create_deck(&app, &alice, "News", "public").await;
    let (status, _, body) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(listed(&body), [pair("deck.created", &news)]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // With nothing new, the wait ends on time with an empty page.
    let end = body["next_cursor"].as_str().unwrap();
    let started = Instant::now();
    let (status, quiet) = feed(&app, &bob, &format!("?after={end}&wait=1")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(listed(&quiet).is_empty());
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

async fn a_cursor_past_retention_is_gone(store: Store) {
    let clock = Arc::new(FixedClock::at(time::OffsetDateTime::now_utc()));
    let app = TestApp::builder(store).clock(clock.clone()).start().await;
    let (_, alice) = app.user_with_token("alice", ALL).await;
    create_deck(&app, &alice, "Old", "public").await;
    create_deck(&app, &alice, "Older", "public").await;
    let cursor = |page: &Value| page["next_cursor"].as_str().unwrap().to_owned();
    let after_first = cursor(&feed(&app, &alice, "?limit=1&types=deck.*").await.1);
    let after_both = cursor(&feed(&app, &alice, "").await.1);

    clock.advance(time::Duration::days(31));
    let fresh = create_deck(&app, &alice, "Fresh", "public").await;
    // The server's prune round takes the two decks' events, and the bundled catalogs' imports.
    let round = app.services.pruning.prune_round(500, 20).await;
    let events = round
        .into_iter()
        .find(|pruned| pruned.name == "events")
        .unwrap();
    assert!(events.deleted.unwrap() >= 2);

    let (status, body) = feed(&app, &alice, &format!("?after={after_first}")).await;
    assert_eq!(status, StatusCode::GONE, "{body}");
    assert_envelope(&body, "SERVICE_CURSOR_EXPIRED");
    for query in [String::new(), format!("?after={after_both}")] {
        let (status, body) = feed(&app, &alice, &query).await;
        assert_eq!(status, StatusCode::OK, "{query}: {body}");
        assert_eq!(listed(&body), [pair("deck.created", &fresh)], "{query}");
    }
}

#[tokio::test]
async fn events_on_memory() {
    the_feed_lists_what_each_caller_may_read_now(TestApp::memory().await).await;
}

#[tokio::test]
async fn events_on_postgres() {
    the_feed_lists_what_each_caller_may_read_now(TestApp::postgres().await).await;
}

#[tokio::test]
async fn long_poll_on_memory() {
    a_long_poll_answers_when_a_readable_event_commits(TestApp::memory().await).await;
}

#[tokio::test]
async fn long_poll_on_postgres() {
    a_long_poll_answers_when_a_readable_event_commits(TestApp::postgres().await).await;
}

#[tokio::test]
async fn retention_on_memory() {
    a_cursor_past_retention_is_gone(Store::Memory).await;
}

#[tokio::test]
async fn retention_on_postgres() {
    a_cursor_past_retention_is_gone(Store::Postgres).await;
}

/// A caller's share of held requests (issue 41): four waits held, a fifth answered at once as
/// with `wait=0`, another caller unaffected; a client that hangs up gives its place back at once.
async fn a_caller_holds_at_most_four_waits_and_a_client_that_hangs_up_ends_its_own(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", ALL).await;
    let (_, bob) = app.user_with_token("bob", "decks:read").await;
    let (_, head) = feed(&app, &alice, "?types=deck.*").await;
    let head = head["next_cursor"].as_str().unwrap().to_owned();
    let held = |token: &str| {
        let request = app
            .client
            .get(app.api(&format!(
                "/games/mtg/events?after={head}&wait=30&types=deck.*"
            )))
            .bearer_auth(token);
        tokio::spawn(send(request))
    };
    let mut waits: Vec<_> = (0..4).map(|_| held(&alice)).collect();
    waits_held(&app, 4).await;
    let started = Instant::now();
    let (status, fifth) = feed(&app, &alice, &format!("?after={head}&wait=30&types=deck.*")).await;
    assert_eq!(status, StatusCode::OK, "{fifth}");
    assert_eq!(fifth["data"], json!([]));
    assert_eq!(fifth["next_cursor"], head.as_str());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Another caller still waits, and is answered by the next readable event like the four.
    waits.push(held(&bob));
    waits_held(&app, 5).await;
    assert!(
        app.metrics_text()
            .await
            .contains("deckhand_feed_waits_held 5"),
        "the held waits are on /metrics"
    );
    let news = create_deck(&app, &alice, "News", "public").await;
    for wait in waits {
        let (status, _, body) = wait.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(listed(&body), [pair("deck.created", &news)]);
    }
    waits_held(&app, 0).await;
    // Clients that hang up end their waits at once.
    let (_, head) = feed(&app, &alice, "?types=deck.*").await;
    let head = head["next_cursor"].as_str().unwrap().to_owned();
    let hung_up: Vec<_> = (0..3)
        .map(|_| {
            let request = app
                .client
                .get(app.api(&format!("/games/mtg/events?after={head}&wait=30")))
                .bearer_auth(&bob);
            tokio::spawn(async move { request.send().await })
        })
        .collect();
    waits_held(&app, 3).await;
    for wait in hung_up {
        wait.abort();
    }
    waits_held(&app, 0).await;
}

/// Waits until `app` holds exactly `held` feed requests (at most 20 s).
async fn waits_held(app: &TestApp, held: u32) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while app.services.events.held_waits() != held {
        assert!(
            Instant::now() < deadline,
            "{} waits held, expected {held}",
            app.services.events.held_waits()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn wait_shares_on_memory() {
    a_caller_holds_at_most_four_waits_and_a_client_that_hangs_up_ends_its_own(
        TestApp::memory().await,
    )
    .await;
}

#[tokio::test]
async fn wait_shares_on_postgres() {
    a_caller_holds_at_most_four_waits_and_a_client_that_hangs_up_ends_its_own(
        TestApp::postgres().await,
    )
    .await;
}

/// Ids inside `data` obey the read rule (issue 41): a fork of a private deck names its source
/// only to those who may read it, and a guide's private deck likewise; `null` to the others.
async fn ids_inside_data_are_null_to_readers_who_may_not_read_them(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", ALL).await;
    let (_, bob) = app
        .user_with_token("bob", "decks:read sideboards:read")
        .await;
    let private = create_deck(&app, &alice, "Draft", "private").await;
    let (_, head) = feed(&app, &bob, "").await;
    let head = head["next_cursor"].as_str().unwrap().to_owned();
    let (status, _, fork) = send(
        app.client
            .post(app.api(&format!("/games/mtg/decks/{private}/fork")))
            .bearer_auth(&alice)
            .json(&json!({"visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    let (status, _, guide) = send(
        app.client
            .post(app.api("/games/mtg/sideboard-guides"))
            .bearer_auth(&alice)
            .json(&json!({"name": "Plan", "deck_id": private, "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{guide}");
    let data_of = |page: &Value, kind: &str| -> Value {
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|event| event["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {page}"))["data"]
            .clone()
    };
    let query = format!("?after={head}");
    let (_, bobs) = feed(&app, &bob, &query).await;
    assert_eq!(
        data_of(&bobs, "deck.created")["forked_from"],
        Value::Null,
        "{bobs}"
    );
    assert_eq!(
        data_of(&bobs, "sideboard_guide.created"),
        json!({"deck_id": null})
    );
    let (_, alices) = feed(&app, &alice, &query).await;
    assert_eq!(
        data_of(&alices, "deck.created")["forked_from"]["deck_id"],
        private.as_str()
    );
    assert_eq!(
        data_of(&alices, "sideboard_guide.created"),
        json!({"deck_id": private})
    );
    // A held request answers by the same rule.
    let waiting = {
        let request = app
            .client
            .get(app.api(&format!(
                "/games/mtg/events?after={}&wait=20",
                bobs["next_cursor"].as_str().unwrap()
            )))
            .bearer_auth(&bob);
        tokio::spawn(send(request))
    };
    waits_held(&app, 1).await;
    let (status, _, again) = send(
        app.client
            .post(app.api(&format!("/games/mtg/decks/{private}/fork")))
            .bearer_auth(&alice)
            .json(&json!({"visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    let (status, _, woken) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{woken}");
    assert_eq!(
        data_of(&woken, "deck.created")["forked_from"],
        Value::Null,
        "{woken}"
    );
}

#[tokio::test]
async fn ids_inside_data_on_memory() {
    ids_inside_data_are_null_to_readers_who_may_not_read_them(TestApp::memory().await).await;
}

#[tokio::test]
async fn ids_inside_data_on_postgres() {
    ids_inside_data_are_null_to_readers_who_may_not_read_them(TestApp::postgres().await).await;
}

/// A held request whose cursor is behind events committed before its instance started listening
/// is answered at once with them, not at the end of its wait: an instance learns the log's head
/// when its listener connects, so such a cursor is never taken for one at the head.
#[tokio::test]
async fn a_held_request_behind_events_older_than_the_instance_answers_at_once() {
    let first = TestApp::postgres().await;
    let (_, alice) = first.user_with_token("alice", ALL).await;
    let (_, head) = feed(&first, &alice, "?types=deck.*").await;
    let head = head["next_cursor"].as_str().unwrap().to_owned();
    let early = create_deck(&first, &alice, "Before the second instance", "public").await;
    let second = first.another_instance().await;
    let started = Instant::now();
    let (status, page) = feed(
        &second,
        &alice,
        &format!("?after={head}&wait=20&types=deck.*"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(listed(&page), [pair("deck.created", &early)]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "answered after {:?}",
        started.elapsed()
    );
}
