//! Partner sync over HTTP, on both stores: conditional reads (ETag, If-None-Match, 304),
//! diffs between versions, and the text export of a past version.

use deckhand_testkit::app::TestApp;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const SCOPES: &str = "decks:read decks:write";

/// Sends `request` with `If-None-Match: etag` and returns the status, the ETag and the raw
/// body.
async fn conditional(request: RequestBuilder, etag: &str) -> (StatusCode, String, String) {
    let response = request.header("If-None-Match", etag).send().await.unwrap();
    let status = response.status();
    let tag = response.headers()["etag"].to_str().unwrap().to_owned();
    (status, tag, response.text().await.unwrap())
}

/// A public deck of alice's at version 3: created, its cards changed, then renamed.
async fn deck_with_history(app: &TestApp, alice: &str) -> String {
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(alice)
            .json(&json!({
                "name": "Burn", "visibility": ["public"],
                "cards": [
                    {"section": "mainboard", "quantity": 4, "name": "Siege Wurm"},
                    {"section": "mainboard", "quantity": 20, "name": "Island", "set": "dom"},
                    {"section": "sideboard", "quantity": 2, "name": "Dimir Spybug"}
                ]
            })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let id = record["id"].as_str().unwrap().to_owned();
    let url = app.api(&format!("/games/mtg/decks/{id}"));
    for body in [
        json!({"cards": [
            {"section": "mainboard", "quantity": 3, "name": "Siege Wurm"},
            {"section": "mainboard", "quantity": 1, "name": "Truefire Captain"},
            {"section": "sideboard", "quantity": 2, "name": "Dimir Spybug"}
        ]}),
        json!({"name": "Big Burn", "legal": true}),
    ] {
        let (status, _, record) = send(app.client.patch(&url).bearer_auth(alice).json(&body)).await;
        assert_eq!(status, StatusCode::OK, "{record}");
    }
    id
}

async fn conditional_reads_answer_304_while_nothing_changed(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let id = deck_with_history(&app, &alice).await;
    let detail = app.api(&format!("/games/mtg/decks/{id}"));

    // Detail: the strong tag is the version; a view (a counter) does not change it.
    let (status, tag, body) = conditional(app.client.get(&detail), "\"2\"").await;
    assert_eq!((status, tag.as_str()), (StatusCode::OK, "\"3\""));
    assert!(body.contains("Big Burn"));
    let (status, _, _) = send(app.client.post(format!("{detail}/views"))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, tag, body) = conditional(app.client.get(&detail), "\"3\"").await;
    assert_eq!(
        (status, tag.as_str(), body.as_str()),
        (StatusCode::NOT_MODIFIED, "\"3\"", "")
    );
    let (status, _, _) = conditional(app.client.get(&detail), "W/\"3\"").await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);

    // Versions: tagged by the newest version; a PATCH moves it.
    let versions = format!("{detail}/versions");
    let (status, tag, _) = conditional(app.client.get(&versions), "\"3\"").await;
    assert_eq!((status, tag.as_str()), (StatusCode::NOT_MODIFIED, "\"3\""));
    let (status, _, _) = send(
        app.client
            .patch(&detail)
            .bearer_auth(&alice)
            .json(&json!({"notes": "new"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, tag, body) = conditional(app.client.get(&versions), "\"3\"").await;
    assert_eq!((status, tag.as_str()), (StatusCode::OK, "\"4\""));
    assert_eq!(
        serde_json::from_str::<Value>(&body)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        4
    );

    // The strategy guide: `null` has a tag of its own; the owner and a preview reader differ.
    let guide = format!("{detail}/guide");
    let (status, tag, body) = conditional(app.client.get(&guide), "\"x\"").await;
    assert_eq!(
        (status, tag.as_str(), body.as_str()),
        (StatusCode::OK, "\"none\"", "null")
    );
    let (status, _, _) = send(app.client.put(&guide).bearer_auth(&alice).json(&json!({
        "content_type": "text", "content": "x".repeat(300), "is_premium": true
    })))
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, preview_tag, _) = conditional(app.client.get(&guide), "\"none\"").await;
    let (status, owner_tag, _) =
        conditional(app.client.get(&guide).bearer_auth(&alice), &preview_tag).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(preview_tag, owner_tag);
    let (status, _, body) = conditional(app.client.get(&guide), &preview_tag).await;
    assert_eq!((status, body.as_str()), (StatusCode::NOT_MODIFIED, ""));

    // A list page: a weak tag over the page, new once a deck on it changes.
    let list = app.api("/games/mtg/decks");
    let (status, page_tag, _) = conditional(app.client.get(&list), "W/\"0\"").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page_tag.starts_with("W/\""), "{page_tag}");
    let (status, _, _) = conditional(app.client.get(&list), &page_tag).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    let (status, _, _) = send(
        app.client
            .patch(&detail)
            .bearer_auth(&alice)
            .json(&json!({"name": "Renamed"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, new_tag, body) = conditional(app.client.get(&list), &page_tag).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(new_tag, page_tag);
    assert!(body.contains("Renamed"));
}

#[tokio::test]
async fn conditional_reads_on_memory() {
    conditional_reads_answer_304_while_nothing_changed(TestApp::memory().await).await;
}

#[tokio::test]
async fn conditional_reads_on_postgres() {
    conditional_reads_answer_304_while_nothing_changed(TestApp::postgres().await).await;
}

async fn diffs_show_cards_and_fields_between_any_two_versions(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let (_, bob) = app.user_with_token("bob", SCOPES).await;
    let id = deck_with_history(&app, &alice).await;
    let diff =
        |from: &str, to: &str| app.api(&format!("/games/mtg/decks/{id}/versions/{from}/diff/{to}"));

    let (status, _, body) = send(app.client.get(diff("1", "3"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["from"].clone(), body["to"].clone()),
        (json!(1), json!(3))
    );
    assert_eq!(
        body["fields"],
        json!([
            {"field": "name", "old": "Burn", "new": "Big Burn"},
            {"field": "legal", "old": false, "new": true}
        ])
    );
    let sections = body["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 1, "the sideboard did not change: {body}");
    let main = &sections[0];
    assert_eq!(main["section"], "mainboard");
    let names = |list: &str| -> Vec<(String, u64, u64)> {
        main[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|card| {
                (
                    card["name"].as_str().unwrap().to_owned(),
                    card["old_quantity"].as_u64().unwrap(),
                    card["new_quantity"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(names("added"), [("Truefire Captain".to_owned(), 0, 1)]);
    assert_eq!(names("removed"), [("Island".to_owned(), 20, 0)]);
    assert_eq!(names("changed"), [("Siege Wurm".to_owned(), 4, 3)]);
    assert!(main["added"][0]["cardId"].is_string() && main["added"][0]["variantId"].is_string());

    // Backwards: added and removed swap, old and new swap.
    let (status, _, back) = send(app.client.get(diff("3", "1"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(back["sections"][0]["added"][0]["name"], "Island");
    assert_eq!(
        back["fields"][0],
        json!({"field": "name", "old": "Big Burn", "new": "Burn"})
    );
    let (_, _, same) = send(app.client.get(diff("2", "2"))).await;
    assert_eq!(
        same,
        json!({"from": 2, "to": 2, "fields": [], "sections": []})
    );

    for (from, to) in [
        ("0", "1"),
        ("1", "4"),
        ("1", "99999999999"),
        ("one", "2"),
        ("1", "-1"),
    ] {
        let (status, _, body) = send(app.client.get(diff(from, to))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{from}..{to}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }

    // Deck visibility rules: a private deck's history is the owner's alone.
    let (status, _, _) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&alice)
            .json(&json!({"visibility": ["private"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    for request in [
        app.client.get(diff("1", "2")),
        app.client.get(diff("1", "2")).bearer_auth(&bob),
    ] {
        let (status, _, body) = send(request).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
    let (status, _, _) = send(app.client.get(diff("1", "2")).bearer_auth(&alice)).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn diffs_on_memory() {
    diffs_show_cards_and_fields_between_any_two_versions(TestApp::memory().await).await;
}

#[tokio::test]
async fn diffs_on_postgres() {
    diffs_show_cards_and_fields_between_any_two_versions(TestApp::postgres().await).await;
}

async fn a_past_version_exports_as_it_was(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", SCOPES).await;
    let id = deck_with_history(&app, &alice).await;
    let export = |body: Value| {
        app.client
            .post(app.api("/games/mtg/decks/export/text"))
            .header("Accept", "text/plain")
            .json(&body)
    };
    let text = |version: i64| {
        let request = export(json!({"deck_id": id, "version": version}));
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            response.text().await.unwrap()
        }
    };
    let first = text(1).await;
    assert!(first.contains("20 Island (DOM)"), "{first}");
    assert!(first.contains("4 Siege Wurm"), "{first}");
    let second = text(2).await;
    assert!(
        !second.contains("Island") && second.contains("3 Siege Wurm"),
        "{second}"
    );
    // Twice, for the cache: the same answer.
    assert_eq!(text(1).await, first);
    let now = export(json!({"deck_id": id}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(now, second, "version 3 changed no cards");

    for version in [0, 4, 99_999_999_999i64] {
        let (status, _, body) = send(
            app.client
                .post(app.api("/games/mtg/decks/export/text"))
                .json(&json!({"deck_id": id, "version": version})),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{version}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks/export/text"))
            .json(&json!({"deck_payload": {"text": "4 Island"}, "version": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR")["fields"][0]["field"],
        "version"
    );
}

#[tokio::test]
async fn past_version_export_on_memory() {
    a_past_version_exports_as_it_was(TestApp::memory().await).await;
}

#[tokio::test]
async fn past_version_export_on_postgres() {
    a_past_version_exports_as_it_was(TestApp::postgres().await).await;
}
