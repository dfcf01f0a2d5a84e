//! What a delivery's body carries: ids inside `data` as its partner, alone, may read them at
//! delivery time.

use std::time::Duration;

use deckhand_testkit::app::{Store, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::receiver::{Received, Receiver};
use super::{app, eventually, partner, policy, register};

/// A public fork of a private deck: the partner of another user receives the fork's
/// `deck.created` with `forked_from: null` (as the deck's own page shows it to that user),
/// while the partner of the source's owner receives the source's id.
async fn a_fork_of_a_private_deck_names_its_source_only_to_who_may_read_it(store: Store) {
    let app = app(store, policy("200ms", Duration::from_secs(5))).await;
    let others = Receiver::start(vec![]).await;
    let owners = Receiver::start(vec![]).await;
    let (alice, alice_key) = partner(&app, "mine", "alice").await;
    let (_, bob_key) = partner(&app, "acme", "bob").await;
    register(&app, &bob_key, &others.url).await;
    register(&app, &alice_key, &owners.url).await;

    let source = created(
        &app,
        &alice,
        "/games/mtg/decks",
        json!({"name": "Secret", "visibility": ["private"]}),
    )
    .await;
    let source_id = source["id"].as_str().unwrap();
    let fork = created(
        &app,
        &alice,
        &format!("/games/mtg/decks/{source_id}/fork"),
        json!({"name": "Shared", "visibility": ["public"]}),
    )
    .await;
    let fork_id = fork["id"].as_str().unwrap();

    let (event, got) = fork_event(&others, fork_id).await;
    assert_eq!(event["type"], "deck.created");
    assert_eq!(event["data"]["forked_from"], Value::Null, "{event}");
    assert!(!got.body.contains(source_id), "{}", got.body);
    // The private source's own event reached no one but its owner's partner.
    assert!(
        others.received().iter().all(|got| {
            let event: Value = serde_json::from_str(&got.body).unwrap();
            event["subject"]["id"] != source_id
        }),
        "the private source's event reached another partner"
    );

    let (event, _) = fork_event(&owners, fork_id).await;
    assert_eq!(
        event["data"]["forked_from"],
        json!({"deck_id": source_id, "version": 1}),
        "{event}"
    );
}

/// The `deck.created` of `fork_id` as `receiver` got it, and what it got.
async fn fork_event(receiver: &Receiver, fork_id: &str) -> (Value, Received) {
    eventually(
        "the fork's deck.created",
        Duration::from_secs(10),
        async || {
            receiver.received().into_iter().find_map(|got| {
                let event: Value = serde_json::from_str(&got.body).unwrap();
                (event["subject"]["id"] == fork_id).then_some((event, got))
            })
        },
    )
    .await
}

async fn created(app: &TestApp, token: &str, path: &str, body: Value) -> Value {
    let response = app
        .client
        .post(app.api(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

#[tokio::test]
async fn a_fork_of_a_private_deck_names_its_source_only_to_who_may_read_it_on_memory() {
    a_fork_of_a_private_deck_names_its_source_only_to_who_may_read_it(Store::Memory).await;
}

#[tokio::test]
async fn a_fork_of_a_private_deck_names_its_source_only_to_who_may_read_it_on_postgres() {
    a_fork_of_a_private_deck_names_its_source_only_to_who_may_read_it(Store::Postgres).await;
}
