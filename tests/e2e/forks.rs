//! Forks and comparisons over HTTP, on both stores: a fork copies a readable deck at a version
//! into a private deck of the caller, names its source (only while the reader may see it) and
//! is counted on it, atomically; `forkedFrom` lists a deck's forks; `compare` diffs two decks
//! with the version diff's shape, or as deck-list text that the export's parser reads back.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const SCOPES: &str = "decks:read decks:write";

async fn created(app: &TestApp, token: &str, body: Value) -> Value {
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    record
}

fn fork_url(app: &TestApp, id: &str) -> String {
    app.api(&format!("/games/mtg/decks/{id}/fork"))
}

async fn detail(app: &TestApp, token: &str, id: &str) -> Value {
    let (status, _, body) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn forks_keep_their_credit(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let source = created(
        &app,
        &alice,
        json!({"name": "Burn", "visibility": ["public"], "notes": "Go fast.",
               "archetype": "Aggro", "legal": true,
               "source_provider": "moxfield", "source_external_id": "abc",
               "cards": [{"section": "mainboard", "quantity": 4, "name": "Truefire Captain"},
                         {"section": "mainboard", "quantity": 20, "name": "Mountain"}]}),
    )
    .await;
    let id = source["id"].as_str().unwrap();
    let (status, _, saved) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&alice)
            .json(&json!({"name": "Burn v2", "cards": [
                {"section": "mainboard", "quantity": 4, "name": "Truefire Captain"},
                {"section": "mainboard", "quantity": 16, "name": "Mountain"}]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{saved}");

    // Bob forks version 1: the content of then, private, manual, counters at zero.
    let (status, headers, fork) = send(
        app.client
            .post(fork_url(&app, id))
            .bearer_auth(&bob)
            .json(&json!({"version": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    assert_eq!(headers["etag"], "\"1\"");
    assert_eq!(fork["name"], "Burn");
    assert_eq!(fork["notes"], "Go fast.");
    assert_eq!(fork["archetype"], "Aggro");
    assert_eq!(fork["legal"], true);
    assert_eq!(fork["visibility"], json!(["private"]));
    assert_eq!(fork["source_provider"], "manual");
    assert_eq!(fork["source_external_id"], Value::Null);
    assert_eq!(
        (fork["likes"].as_i64(), fork["pageviews"].as_i64()),
        (Some(0), Some(0))
    );
    assert_eq!(fork["forked_from"], json!({"deck_id": id, "version": 1}));
    assert_eq!(fork["forks"], 0);
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    let (_, _, cards) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{fork_id}?expand=cards")))
            .bearer_auth(&bob),
    )
    .await;
    let mountains = cards["expanded_cards"][0]["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|card| card["name"] == "Mountain")
        .cloned()
        .unwrap();
    assert_eq!(mountains["quantity"], 20);
    // The first history record names the source.
    let (_, _, versions) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{fork_id}/versions")))
            .bearer_auth(&bob),
    )
    .await;
    assert_eq!(versions[0]["history_type"], "create");
    assert_eq!(
        versions[0]["forked_from"],
        json!({"deck_id": id, "version": 1})
    );
    // A public fork at the current version, with a name of its own.
    let (status, _, public_fork) = send(
        app.client
            .post(fork_url(&app, id))
            .bearer_auth(&bob)
            .json(&json!({"name": "My burn", "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{public_fork}");
    assert_eq!(
        public_fork["forked_from"],
        json!({"deck_id": id, "version": 2})
    );
    let public_fork_id = public_fork["id"].as_str().unwrap().to_owned();

    // The source counts them; the detail, the list and the `forkedFrom` filter show them.
    assert_eq!(detail(&app, &bob, id).await["forks"], 2);
    let (status, _, forks) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks?forkedFrom={id}")))
            .bearer_auth(&bob),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{forks}");
    let ids: Vec<&str> = forks["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|deck| deck["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [public_fork_id.as_str(), fork_id.as_str()]);
    assert_eq!(forks["data"][0]["forked_from"]["deck_id"], id);
    let (status, _, all) = send(app.client.get(app.api("/games/mtg/decks"))).await;
    assert_eq!(status, StatusCode::OK);
    let listed = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|deck| deck["id"] == id)
        .cloned()
        .unwrap();
    assert_eq!(
        (listed["forks"].as_i64(), &listed["forked_from"]),
        (Some(2), &Value::Null)
    );
    let (status, _, bad) = send(app.client.get(app.api("/games/mtg/decks?forkedFrom=nope"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&bad, "SERVICE_VALIDATION_ERROR");

    // The source turns private: its id is hidden from everyone but its owner, everywhere.
    let (status, _, _) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&alice)
            .json(&json!({"visibility": ["private"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        detail(&app, &bob, &fork_id).await["forked_from"],
        Value::Null
    );
    let anonymous = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{public_fork_id}"))),
    )
    .await;
    assert_eq!(anonymous.2["forked_from"], Value::Null);
    assert_eq!(
        detail(&app, &alice, &public_fork_id).await["forked_from"],
        json!({"deck_id": id, "version": 2})
    );
    let (_, _, versions) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{fork_id}/versions")))
            .bearer_auth(&bob),
    )
    .await;
    assert_eq!(versions[0]["forked_from"], Value::Null);
    let (status, _, renamed) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{fork_id}")))
            .bearer_auth(&bob)
            .json(&json!({"name": "Still mine"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["forked_from"], Value::Null);
    let (_, _, page) = send(app.client.get(app.api("/games/mtg/decks"))).await;
    let shown = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|deck| deck["id"] == public_fork_id.as_str())
        .cloned()
        .unwrap();
    assert_eq!(shown["forked_from"], Value::Null);
    // Nor does the filter tell which decks came from it.
    let (_, _, forks) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks?forkedFrom={id}")))
            .bearer_auth(&bob),
    )
    .await;
    assert_eq!(forks["data"], json!([]));
    assert_eq!(forks["pagination"]["total"], 0);
    let (_, _, forks) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks?forkedFrom={id}")))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(
        forks["data"].as_array().unwrap().len(),
        1,
        "bob's public fork"
    );

    // A hidden source, a version outside the history: 404; a partner alone: 401; a reader: 403.
    let (status, _, body) = send(
        app.client
            .post(fork_url(&app, id))
            .bearer_auth(&bob)
            .json(&json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    let (status, _, body) = send(
        app.client
            .post(fork_url(&app, id))
            .bearer_auth(&alice)
            .json(&json!({"version": 9})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _, body) = send(
        app.client
            .post(fork_url(&app, id))
            .bearer_auth(&alice)
            .json(&json!({"name": ""})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR")["fields"][0]["field"],
        "name"
    );
    let key = app.partner_with_key("acme", "alice", SCOPES).await;
    let (status, _, body) = send(
        app.client
            .post(fork_url(&app, &public_fork_id))
            .header("x-api-key", &key)
            .json(&json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");
    let reader = app
        .admin(&["pat", "create", "--user", "bob", "--scopes", "decks:read"])
        .await
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, _, body) = send(
        app.client
            .post(fork_url(&app, &public_fork_id))
            .bearer_auth(&reader)
            .json(&json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE");

    // `Idempotency-Key` as on other creates: the same fork again, nothing new.
    let forked = |key: &'static str| {
        app.client
            .post(fork_url(&app, &public_fork_id))
            .bearer_auth(&alice)
            .header("Idempotency-Key", key)
            .json(&json!({"name": "Once"}))
    };
    let (status, _, first) = send(forked("fork-1")).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, headers, again) = send(forked("fork-1")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(again["id"], first["id"]);
    assert_eq!(detail(&app, &alice, &public_fork_id).await["forks"], 1);
}

#[tokio::test]
async fn forks_on_memory() {
    forks_keep_their_credit(TestApp::memory().await).await;
}

#[tokio::test]
async fn forks_on_postgres() {
    forks_keep_their_credit(TestApp::postgres().await).await;
}

async fn parallel_forks_all_count(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let source = created(
        &app,
        &alice,
        json!({"name": "Popular", "visibility": ["public"]}),
    )
    .await;
    let id = source["id"].as_str().unwrap();
    let forks = (0..20).map(|index| {
        send(
            app.client
                .post(fork_url(&app, id))
                .bearer_auth(if index % 2 == 0 { &alice } else { &bob })
                .json(&json!({"name": format!("Fork {index}")})),
        )
    });
    for (status, _, body) in futures_util::future::join_all(forks).await {
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    assert_eq!(detail(&app, &bob, id).await["forks"], 20);
    let (_, _, page) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks?forkedFrom={id}&limit=100")))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(
        page["pagination"]["total"], 10,
        "alice sees her own private forks only"
    );
}

#[tokio::test]
async fn parallel_forks_on_memory() {
    parallel_forks_all_count(TestApp::memory().await).await;
}

#[tokio::test]
async fn parallel_forks_on_postgres() {
    parallel_forks_all_count(TestApp::postgres().await).await;
}

async fn two_decks_compare(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let burn = created(
        &app,
        &alice,
        json!({"name": "Burn", "visibility": ["public"],
               "cards": [{"section": "mainboard", "quantity": 4, "name": "Truefire Captain"},
                         {"section": "mainboard", "quantity": 20, "name": "Mountain"},
                         {"section": "sideboard", "quantity": 2, "name": "Shield Mare"}]}),
    )
    .await;
    let knights = created(
        &app,
        &bob,
        json!({"name": "Knights", "visibility": ["public"],
               "cards": [{"section": "mainboard", "quantity": 4, "name": "Truefire Captain"},
                         {"section": "mainboard", "quantity": 16, "name": "Mountain"},
                         {"section": "mainboard", "quantity": 4, "name": "Fearless Halberdier"}]}),
    )
    .await;
    let hidden = created(&app, &alice, json!({"name": "Secret"})).await;
    let (a, b) = (
        burn["id"].as_str().unwrap(),
        knights["id"].as_str().unwrap(),
    );
    let compare = |from: &str, to: &str| app.api(&format!("/games/mtg/decks/{from}/compare/{to}"));

    let (status, headers, diff) = send(app.client.get(compare(a, b))).await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(headers["vary"], "Accept");
    assert_eq!(
        (diff["from"].as_i64(), diff["to"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        diff["fields"],
        json!([{"field": "name", "old": "Burn", "new": "Knights"}])
    );
    let main = &diff["sections"][0];
    assert_eq!(main["section"], "mainboard");
    assert_eq!(main["added"][0]["name"], "Fearless Halberdier");
    assert_eq!(main["changed"][0]["name"], "Mountain");
    assert_eq!(
        (
            main["changed"][0]["old_quantity"].as_i64(),
            main["changed"][0]["new_quantity"].as_i64()
        ),
        (Some(20), Some(16))
    );
    assert_eq!(diff["sections"][1]["removed"][0]["name"], "Shield Mare");

    // As text, by parameter or by `Accept`: blocks the export's parser reads back.
    let text = |request: reqwest::RequestBuilder| async move {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; charset=utf-8"
        );
        response.text().await.unwrap()
    };
    let by_query = text(app.client.get(format!("{}?format=text", compare(a, b)))).await;
    let by_accept = text(app.client.get(compare(a, b)).header("accept", "text/plain")).await;
    assert_eq!(by_query, by_accept);
    let lines: Vec<&str> = by_query.lines().collect();
    assert_eq!(lines[0], "// Add");
    assert_eq!(lines[1], "Deck");
    assert!(
        lines[2].starts_with("4 Fearless Halberdier ("),
        "{by_query}"
    );
    assert!(
        by_query.contains("// Remove\nDeck\n4 Mountain ("),
        "{by_query}"
    );
    assert!(
        by_query.contains("// Remove\nSideboard\n2 Shield Mare ("),
        "{by_query}"
    );
    for block in by_query.split("\n\n") {
        let (status, headers, exported) = send(
            app.client
                .post(app.api("/games/mtg/decks/export/text"))
                .json(&json!({"deck_payload": {"text": block}})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{exported}");
        assert!(
            headers
                .get("x-service-export-warnings")
                .is_none_or(|value| value == "[]"),
            "{block}"
        );
        let body = block.split_once('\n').unwrap().1;
        assert_eq!(exported.as_str().unwrap().trim_end(), body.trim_end());
    }
    // Two decks with the same cards: one line that says so, not an empty body.
    let same = text(app.client.get(format!("{}?format=text", compare(a, a)))).await;
    assert_eq!(same, "// No card changes\n");
    let json = send(
        app.client
            .get(format!("{}?format=json", compare(a, b)))
            .header("accept", "text/plain"),
    )
    .await;
    assert_eq!(json.0, StatusCode::OK);
    assert_eq!(json.2["from"], 1);

    // Hidden, unknown or malformed: 404, whichever side; a bad format: 400.
    let secret = hidden["id"].as_str().unwrap();
    for url in [compare(a, secret), compare(secret, a)] {
        let (status, _, body) = send(app.client.get(&url).bearer_auth(&bob)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
    let (status, _, _) = send(app.client.get(compare(a, secret)).bearer_auth(&alice)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = send(app.client.get(compare(a, "not-a-uuid"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(app.client.get(format!("{}?format=yaml", compare(a, b)))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn compare_on_memory() {
    two_decks_compare(TestApp::memory().await).await;
}

#[tokio::test]
async fn compare_on_postgres() {
    two_decks_compare(TestApp::postgres().await).await;
}

#[tokio::test]
async fn the_demo_seed_shows_a_fork() {
    let app = TestApp::memory().await;
    let demo = app.admin(&["demo", "seed"]).await.unwrap();
    let token = demo["personal_access_token"].as_str().unwrap();
    let (source, fork) = (
        demo["public_deck_id"].as_str().unwrap(),
        demo["fork_deck_id"].as_str().unwrap(),
    );
    assert_eq!(detail(&app, token, source).await["forks"], 1);
    assert_eq!(
        detail(&app, token, fork).await["forked_from"],
        json!({"deck_id": source, "version": 1})
    );
    let response = app
        .client
        .get(app.api(&format!(
            "/games/mtg/decks/{source}/compare/{fork}?format=text"
        )))
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    assert!(text.starts_with("// Add\nDeck\n2 Island ("), "{text}");
    assert!(text.contains("\n\n// Remove\nDeck\n2 Plains ("), "{text}");
    assert_eq!(text.lines().count(), 7, "{text}");
}
