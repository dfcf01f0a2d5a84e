//! Every 201 names the new resource in `Location`: its absolute URL under the public URL,
//! documented on every 201 of the OpenAPI document, and the same on an idempotent replay.

use std::collections::BTreeSet;

use deckhand_testkit::app::{Store, TestApp};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::support::send;

const PUBLIC_URL: &str = "https://decks.example";

fn location(headers: &HeaderMap) -> String {
    headers
        .get("location")
        .expect("a 201 with Location")
        .to_str()
        .unwrap()
        .to_owned()
}

/// `Location` is `path` under the public URL, and reading it there answers 200 (`key` reads
/// webhooks, `token` the rest).
async fn assert_location(app: &TestApp, headers: &HeaderMap, path: &str, reader: &str) {
    let expected = format!("{PUBLIC_URL}/api/public/v1{path}");
    assert_eq!(location(headers), expected);
    let request = app.client.get(app.api(path));
    let request = if path.starts_with("/webhooks") {
        request.header("x-api-key", reader)
    } else {
        request.bearer_auth(reader)
    };
    let (status, _, body) = send(request).await;
    assert_eq!(status, StatusCode::OK, "GET {path}: {body}");
}

#[tokio::test]
async fn every_201_names_the_new_resource_in_location() {
    let app = TestApp::builder(Store::Memory)
        .public_url(PUBLIC_URL)
        .rate_limits(None)
        .start()
        .await;
    let (_, token) = app
        .user_with_token(
            "maker",
            "decks:read decks:write sideboards:read sideboards:write",
        )
        .await;
    app.admin(&[
        "partner",
        "create",
        "--slug",
        "maker",
        "--owner",
        "maker",
        "--scopes",
        "decks:read",
        "--game-scopes",
        "mtg",
    ])
    .await
    .unwrap();
    let key = app
        .admin(&["api-key", "create", "--partner", "maker"])
        .await
        .unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let post = |path: &str, body: Value| {
        app.client
            .post(app.api(path))
            .bearer_auth(&token)
            .json(&body)
    };

    // A deck, with an idempotency key: the replay names the same deck.
    let create = || {
        post(
            "/games/mtg/decks",
            json!({"name": "Located", "visibility": ["public"]}),
        )
        .header("Idempotency-Key", "located-1")
    };
    let (status, headers, deck) = send(create()).await;
    assert_eq!(status, StatusCode::CREATED, "{deck}");
    let deck_id = deck["id"].as_str().unwrap().to_owned();
    assert_location(
        &app,
        &headers,
        &format!("/games/mtg/decks/{deck_id}"),
        &token,
    )
    .await;
    let (status, replayed, _) = send(create()).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(replayed["idempotent-replayed"], "true");
    assert_eq!(location(&replayed), location(&headers));

    // Its fork.
    let (status, headers, fork) =
        send(post(&format!("/games/mtg/decks/{deck_id}/fork"), json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    let fork_id = fork["id"].as_str().unwrap();
    assert_location(
        &app,
        &headers,
        &format!("/games/mtg/decks/{fork_id}"),
        &token,
    )
    .await;

    // Its strategy guide: created (201, Location), then replaced (200).
    let guide = || {
        app.client
            .put(app.api(&format!("/games/mtg/decks/{deck_id}/guide")))
            .bearer_auth(&token)
            .json(&json!({"content_type": "markdown", "content": "Attack."}))
    };
    let (status, headers, body) = send(guide()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_location(
        &app,
        &headers,
        &format!("/games/mtg/decks/{deck_id}/guide"),
        &token,
    )
    .await;
    let (status, _, body) = send(guide()).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A sideboard guide and a matchup of it.
    let (status, headers, sideboard) = send(post(
        "/games/mtg/sideboard-guides",
        json!({"deck_id": deck_id, "name": "Located guide"}),
    ))
    .await;
    assert_eq!(status, StatusCode::CREATED, "{sideboard}");
    let guide_id = sideboard["id"].as_str().unwrap();
    let guide_path = format!("/games/mtg/sideboard-guides/{guide_id}");
    assert_location(&app, &headers, &guide_path, &token).await;
    let (status, headers, matchup) = send(post(
        &format!("{guide_path}/matchups"),
        json!({"opponent_deck_name": "Burn"}),
    ))
    .await;
    assert_eq!(status, StatusCode::CREATED, "{matchup}");
    let matchup_id = matchup["id"].as_str().unwrap();
    assert_eq!(
        location(&headers),
        format!("{PUBLIC_URL}/api/public/v1{guide_path}/matchups/{matchup_id}")
    );

    // A webhook endpoint.
    let (status, headers, webhook) = send(
        app.client
            .post(app.api("/webhooks"))
            .header("x-api-key", &key)
            .json(&json!({"url": "https://93.184.216.34/hook"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{webhook}");
    let webhook_id = webhook["id"].as_str().unwrap();
    assert_location(&app, &headers, &format!("/webhooks/{webhook_id}"), &key).await;

    // The document: exactly these operations answer 201, and each documents `Location`.
    let (_, _, document) = send(app.client.get(app.api("/openapi.json"))).await;
    let mut creating = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Some(created) = operation["responses"].get("201") else {
                continue;
            };
            assert!(
                created["headers"]["Location"].is_object(),
                "{method} {path}: the 201 does not document Location"
            );
            creating.insert(format!("{method} {path}"));
        }
    }
    let tested: BTreeSet<String> = [
        "post /api/public/v1/games/{game}/decks",
        "post /api/public/v1/games/{game}/decks/{id}/fork",
        "put /api/public/v1/games/{game}/decks/{id}/guide",
        "post /api/public/v1/games/{game}/sideboard-guides",
        "post /api/public/v1/games/{game}/sideboard-guides/{id}/matchups",
        "post /api/public/v1/webhooks",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(creating, tested, "a new 201: test its Location here");
}
