//! Likes of decks and sideboard guides over HTTP, on both stores: idempotent per user,
//! counters and the likes sort following at once, visibility, scopes and the need for a user;
//! and the guide detail's and list's ETags.

use deckhand_testkit::app::TestApp;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const SCOPES: &str = "decks:read decks:write sideboards:read sideboards:write";

/// Status and body of a request that may answer without one (204).
async fn status_of(request: RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn created(app: &TestApp, token: &str, path: &str, body: Value) -> String {
    let (status, _, record) = send(
        app.client
            .post(app.api(path))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    record["id"].as_str().unwrap().to_owned()
}

async fn likes(app: &TestApp, token: &str, url: &str) -> i64 {
    let (status, _, body) = send(app.client.get(url).bearer_auth(token)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["likes"].as_i64().unwrap()
}

/// An API key of a partner owned by `owner`, with every scope: a caller with no user.
async fn partner_key(app: &TestApp, owner: &str) -> String {
    app.admin(&[
        "partner",
        "create",
        "--slug",
        "acme",
        "--owner",
        owner,
        "--scopes",
        SCOPES,
        "--game-scopes",
        "*",
    ])
    .await
    .unwrap();
    app.admin(&["api-key", "create", "--partner", "acme"])
        .await
        .unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Runs the like rules against the `like` URL of an item whose detail is at `detail`, hidden
/// from bob at `hidden_like`; `scope` is the write scope it needs.
async fn likes_follow_the_rules(
    app: &TestApp,
    (alice, bob, key): (&str, &str, &str),
    detail: &str,
    hidden_like: &str,
    scope: &str,
) {
    let like = format!("{detail}/like");
    for _ in 0..2 {
        let (status, body) = status_of(app.client.put(&like).bearer_auth(bob)).await;
        assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
    }
    assert_eq!(likes(app, alice, detail).await, 1, "idempotent per user");
    let (status, _) = status_of(app.client.put(&like).bearer_auth(alice)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(likes(app, bob, detail).await, 2);
    for _ in 0..2 {
        let (status, _) = status_of(app.client.delete(&like).bearer_auth(bob)).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    assert_eq!(likes(app, alice, detail).await, 1);

    // Hidden from the caller: 404, nothing counted.
    let (status, body) = status_of(app.client.put(hidden_like).bearer_auth(bob)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    // No credentials: 401; a partner with no user: 401; a token without the scope: 403.
    let (status, body) = status_of(app.client.put(&like)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");
    let (status, body) = status_of(app.client.put(&like).header("x-api-key", key)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    let reader = app
        .admin(&[
            "pat",
            "create",
            "--user",
            "bob",
            "--scopes",
            "decks:read sideboards:read",
        ])
        .await
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = status_of(app.client.put(&like).bearer_auth(&reader)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE")["required"],
        json!([scope])
    );
    assert_eq!(likes(app, alice, detail).await, 1);
}

async fn decks_and_guides_are_liked_once_per_user(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let key = partner_key(&app, "alice").await;
    let deck_path = |id: &str| app.api(&format!("/games/mtg/decks/{id}"));
    let guide_path = |id: &str| app.api(&format!("/games/mtg/sideboard-guides/{id}"));

    let liked = created(
        &app,
        &alice,
        "/games/mtg/decks",
        json!({"name": "Liked", "visibility": ["public"]}),
    )
    .await;
    let plain = created(
        &app,
        &alice,
        "/games/mtg/decks",
        json!({"name": "Plain", "visibility": ["public"]}),
    )
    .await;
    let hidden = created(
        &app,
        &alice,
        "/games/mtg/decks",
        json!({"name": "Hidden", "visibility": ["unlisted"]}),
    )
    .await;
    likes_follow_the_rules(
        &app,
        (&alice, &bob, &key),
        &deck_path(&liked),
        &format!("{}/like", deck_path(&hidden)),
        "decks:write",
    )
    .await;
    // The likes sort follows at once, in both directions.
    let (_, _, page) = send(
        app.client
            .get(app.api("/games/mtg/decks?sort=likes&order=desc")),
    )
    .await;
    assert_eq!(page["data"][0]["id"], liked.as_str());
    assert_eq!(page["data"][0]["likes"], 1);
    let (_, _, page) = send(
        app.client
            .get(app.api("/games/mtg/decks?sort=likes&order=asc")),
    )
    .await;
    assert_eq!(page["data"][0]["id"], plain.as_str());

    let guide = created(
        &app,
        &alice,
        "/games/mtg/sideboard-guides",
        json!({"name": "Plan", "deck_id": plain, "visibility": ["public"]}),
    )
    .await;
    let private = created(
        &app,
        &alice,
        "/games/mtg/sideboard-guides",
        json!({"name": "Secret", "deck_id": plain}),
    )
    .await;
    let (_, _, before) = send(app.client.get(guide_path(&guide)).bearer_auth(&alice)).await;
    likes_follow_the_rules(
        &app,
        (&alice, &bob, &key),
        &guide_path(&guide),
        &format!("{}/like", guide_path(&private)),
        "sideboards:write",
    )
    .await;
    let (_, _, after) = send(app.client.get(guide_path(&guide)).bearer_auth(&alice)).await;
    assert_eq!(after["editedAt"], before["editedAt"], "a like is no edit");
    let (_, _, page) = send(
        app.client
            .get(app.api("/games/mtg/sideboard-guides?sort=likes&order=desc"))
            .bearer_auth(&bob),
    )
    .await;
    assert_eq!(page["data"][0]["id"], guide.as_str());
    assert_eq!(page["data"][0]["likes"], 1);

    // Many users at once lose nothing.
    let mut fans = Vec::new();
    for index in 0..6 {
        fans.push(app.user_with_token(&format!("fan{index}"), SCOPES).await.1);
    }
    let url = format!("{}/like", deck_path(&plain));
    let requests = fans
        .iter()
        .map(|fan| app.client.put(&url).bearer_auth(fan).send());
    for response in futures_util::future::join_all(requests).await {
        assert_eq!(response.unwrap().status(), StatusCode::NO_CONTENT);
    }
    assert_eq!(likes(&app, &alice, &deck_path(&plain)).await, 6);
}

#[tokio::test]
async fn likes_on_memory() {
    decks_and_guides_are_liked_once_per_user(TestApp::memory().await).await;
}

#[tokio::test]
async fn likes_on_postgres() {
    decks_and_guides_are_liked_once_per_user(TestApp::postgres().await).await;
}

/// Sends `request` with `If-None-Match: etag`; returns the status, the ETag and the raw body.
async fn conditional(request: RequestBuilder, etag: &str) -> (StatusCode, String, String) {
    let response = request.header("If-None-Match", etag).send().await.unwrap();
    let status = response.status();
    let tag = response.headers()["etag"].to_str().unwrap().to_owned();
    (status, tag, response.text().await.unwrap())
}

async fn guide_reads_answer_304_while_nothing_changed(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let deck = created(
        &app,
        &alice,
        "/games/mtg/decks",
        json!({"name": "Base", "visibility": ["public"]}),
    )
    .await;
    let guide = created(
        &app,
        &alice,
        "/games/mtg/sideboard-guides",
        json!({"name": "Plan", "deck_id": deck, "visibility": ["public"]}),
    )
    .await;
    let detail = app.api(&format!("/games/mtg/sideboard-guides/{guide}"));

    let (status, tag, body) = conditional(app.client.get(&detail).bearer_auth(&bob), "\"x\"").await;
    assert_eq!(status, StatusCode::OK);
    assert!(tag.starts_with('"'), "strong: {tag}");
    assert!(body.contains("Plan"));
    let (status, again, body) = conditional(app.client.get(&detail).bearer_auth(&bob), &tag).await;
    assert_eq!(
        (status, again.as_str(), body.as_str()),
        (StatusCode::NOT_MODIFIED, tag.as_str(), "")
    );
    // A change to what the detail shows (a like, the attached deck's name) gives a new tag.
    let (status, _) = status_of(app.client.put(format!("{detail}/like")).bearer_auth(&bob)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, liked_tag, _) = conditional(app.client.get(&detail).bearer_auth(&bob), &tag).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(liked_tag, tag);
    let (status, _, _) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{deck}")))
            .bearer_auth(&alice)
            .json(&json!({"name": "Renamed base"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) =
        conditional(app.client.get(&detail).bearer_auth(&bob), &liked_tag).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("Renamed base"));

    // The list (and `my`): a weak tag over the page.
    for list in [
        app.api("/games/mtg/sideboard-guides"),
        app.api("/games/mtg/sideboard-guides/my"),
    ] {
        let (status, page_tag, _) =
            conditional(app.client.get(&list).bearer_auth(&alice), "W/\"0\"").await;
        assert_eq!(status, StatusCode::OK);
        assert!(page_tag.starts_with("W/\""), "{page_tag}");
        let (status, _, body) =
            conditional(app.client.get(&list).bearer_auth(&alice), &page_tag).await;
        assert_eq!((status, body.as_str()), (StatusCode::NOT_MODIFIED, ""));
    }
}

#[tokio::test]
async fn guide_conditional_reads_on_memory() {
    guide_reads_answer_304_while_nothing_changed(TestApp::memory().await).await;
}

#[tokio::test]
async fn guide_conditional_reads_on_postgres() {
    guide_reads_answer_304_while_nothing_changed(TestApp::postgres().await).await;
}
