//! Format checks over HTTP, on both stores: rules in the formats list, inline and stored
//! checks, legality as of a date after an operator's ban, and every refusal in the envelope.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, problem_rules, send};

async fn check_list(app: &TestApp, game: &str, body: Value) -> (StatusCode, Value) {
    let (status, _, body) = send(
        app.client
            .post(app.api(&format!("/games/{game}/decks/check")))
            .json(&body),
    )
    .await;
    (status, body)
}

fn field_code(body: &Value) -> (String, String) {
    let details = assert_envelope(body, "SERVICE_VALIDATION_ERROR");
    let field = &details["fields"][0];
    (
        field["field"].as_str().unwrap().to_owned(),
        field["code"].as_str().unwrap().to_owned(),
    )
}

const LIST: &str = "4 Siege Wurm\n56 Island\n\nSideboard\n1 Siege Wurm\n2 Lightnig Bolt\n\nMaybeboard\n9 Siege Wurm\n";

async fn scenario(app: &TestApp) {
    // Formats list their rules; a game without rule rows lists null.
    let (status, _, formats) = send(app.client.get(app.api("/games/mtg/formats"))).await;
    assert_eq!(status, StatusCode::OK);
    let modern = formats
        .as_array()
        .unwrap()
        .iter()
        .find(|format| format["slug"] == "modern")
        .unwrap();
    assert_eq!(
        modern["rules"],
        json!({"main_min": 60, "main_max": null, "sideboard_max": 15, "copy_limit": 4,
               "singleton": false, "commander": null})
    );
    let commander = formats
        .as_array()
        .unwrap()
        .iter()
        .find(|format| format["slug"] == "commander")
        .unwrap();
    assert_eq!(
        commander["rules"]["commander"],
        json!({"count_max": 2, "deck_size": 100, "color_identity": true})
    );
    let (_, _, lorcana) = send(app.client.get(app.api("/games/lorcana/formats"))).await;
    assert!(
        lorcana
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rules"].is_null())
    );

    // An inline list, anonymous: copies across sections, the maybeboard ignored, an
    // unresolved line reported with its line number.
    let (status, report) = check_list(
        app,
        "mtg",
        json!({"format": "modern", "text": LIST, "as_of": "2025-12-31T23:00:00+01:00"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["legal"], false);
    assert_eq!(report["as_of"], "2025-12-31T22:00:00Z");
    assert_eq!(
        report["format"],
        json!({"id": "59b2f751-ebfb-5171-bef0-554ccfd0df1b", "slug": "modern", "name": "Modern"})
    );
    assert_eq!(
        problem_rules(&report),
        [
            ("copy_limit".to_owned(), Some("Siege Wurm".to_owned())),
            ("unresolved".to_owned(), None),
        ]
    );
    let copies = &report["problems"][0];
    assert_eq!(
        (copies["count"].clone(), copies["limit"].clone()),
        (json!(5), json!(4))
    );
    assert_eq!(copies["section"], Value::Null);
    assert_eq!(report["problems"][1]["section"], "sideboard");
    assert_eq!(
        report["problems"][1]["message"],
        "line 6: no card found for \"Lightnig Bolt\""
    );

    // An operator bans a card from a date (after the bundled catalog's import, which recorded
    // it legal): checks before it pass, after it do not.
    let banned = app
        .admin(&[
            "format",
            "legality",
            "--format",
            "modern",
            "--card",
            "siege wurm",
            "--status",
            "banned",
            "--from",
            "2030-01-01",
        ])
        .await
        .unwrap();
    assert_eq!(banned["card"]["name"], "Siege Wurm");
    assert_eq!(banned["from"], "2030-01-01T00:00:00Z");
    let legal = json!({"format": "modern", "cards": [
        {"section": "mainboard", "quantity": 4, "name": "Siege Wurm"},
        {"section": "mainboard", "quantity": 56, "name": "Island"}]});
    let at = |as_of: &str| {
        let mut body = legal.clone();
        body["as_of"] = json!(as_of);
        body
    };
    let (status, before) = check_list(app, "mtg", at("2029-12-31T00:00:00Z")).await;
    assert_eq!(status, StatusCode::OK, "{before}");
    assert_eq!(before["legal"], true, "{before}");
    assert_eq!(before["problems"], json!([]));
    let (_, after) = check_list(app, "mtg", at("2030-06-01T00:00:00Z")).await;
    assert_eq!(
        problem_rules(&after),
        [("banned".to_owned(), Some("Siege Wurm".to_owned()))]
    );
    // Default: now, before the ban.
    let (_, now) = check_list(app, "mtg", legal.clone()).await;
    assert_eq!(now["legal"], true, "{now}");
    assert!(now["as_of"].as_str().unwrap().ends_with('Z'));

    // Refusals, each in the envelope.
    let (status, body) = check_list(app, "mtg", json!({"format": "oldschool", "text": LIST})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("format".into(), "unknown".into()));
    let (status, body) = check_list(app, "lorcana", json!({"format": "core", "text": "4 X"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("format".into(), "no_rules".into()));
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Core Constructed"),
        "{body}"
    );
    let (status, body) = check_list(app, "mtg", json!({"text": LIST})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("format".into(), "required".into()));
    let (status, body) = check_list(
        app,
        "mtg",
        json!({"format": "modern", "text": LIST, "cards": []}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    let (status, body) = check_list(
        app,
        "mtg",
        json!({"format": "modern", "text": LIST, "as_of": "yesterday"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("as_of".into(), "invalid".into()));
    let (status, body) = check_list(
        app,
        "mtg",
        json!({"format": "modern", "cards": [{"section": "attic", "quantity": 1, "name": "Island"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        field_code(&body),
        ("cards[0].section".into(), "unknown".into())
    );

    // A stored deck: its own format by default, the deck detail's visibility.
    let (_, alice) = app.user_with_token("alice", "decks:read decks:write").await;
    let create = |visibility: &str, format: Value| {
        json!({"name": "Chromium", "visibility": [visibility], "format": format, "cards": [
            {"section": "commander", "quantity": 1, "name": "Chromium, the Mutable"},
            {"section": "mainboard", "quantity": 97, "name": "Island"},
            {"section": "mainboard", "quantity": 2, "name": "Siege Wurm"},
            {"section": "maybeboard", "quantity": 3, "name": "Lyra Dawnbringer"}]})
    };
    let mut ids = Vec::new();
    // The format by slug, like a check takes it; the write record answers its id.
    for (visibility, format) in [("public", json!("commander")), ("private", Value::Null)] {
        let (status, _, record) = send(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&alice)
                .json(&create(visibility, format.clone())),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
        if !format.is_null() {
            assert_eq!(record["format"], "5901af00-a0f7-5199-86cf-5e2d29f800d4");
        }
        ids.push(record["id"].as_str().unwrap().to_owned());
    }
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&alice)
            .json(&create("public", json!("oldschool"))),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(field_code(&body), ("format".into(), "unknown".into()));
    let deck_check =
        |id: &str, query: &str| app.api(&format!("/games/mtg/decks/{id}/check{query}"));
    let (status, _, report) = send(app.client.get(deck_check(&ids[0], ""))).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["format"]["slug"], "commander");
    // Siege Wurm twice in a singleton format and outside Chromium's colours (W U B).
    assert_eq!(
        problem_rules(&report),
        [
            ("color_identity".to_owned(), Some("Siege Wurm".to_owned())),
            ("copy_limit".to_owned(), Some("Siege Wurm".to_owned())),
        ]
    );
    let (status, _, body) = send(app.client.get(deck_check(&ids[1], ""))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a private deck is hidden");
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    let (status, _, body) = send(app.client.get(deck_check(&ids[1], "")).bearer_auth(&alice)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("format".into(), "required".into()));
    let (status, _, report) = send(
        app.client
            .get(deck_check(
                &ids[1],
                "?format=vintage&as_of=2025-01-01T00:00:00Z",
            ))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["format"]["slug"], "vintage");
    // 99 mainboard cards and a commander are a fine vintage deck.
    assert_eq!(report["problems"], json!([]), "{report}");
    assert_eq!(report["legal"], true);
    assert_eq!(report["as_of"], "2025-01-01T00:00:00Z");
    // A plain date is the start of that day, UTC.
    let (status, _, report) = send(
        app.client
            .get(deck_check(&ids[1], "?format=vintage&as_of=2025-01-01"))
            .bearer_auth(&alice),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["as_of"], "2025-01-01T00:00:00Z");
    // PATCH takes a slug too.
    let (status, _, record) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{}", ids[1])))
            .bearer_auth(&alice)
            .json(&json!({"format": "vintage"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{record}");
    let vintage = formats
        .as_array()
        .unwrap()
        .iter()
        .find(|format| format["slug"] == "vintage")
        .unwrap();
    assert_eq!(record["format"], vintage["id"]);
    let (status, _, body) = send(app.client.get(deck_check(&ids[0], "?format=nope"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("format".into(), "unknown".into()));
    let (status, _, body) = send(app.client.get(deck_check(&ids[0], "?as_of=tomorrow"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(field_code(&body), ("as_of".into(), "invalid".into()));
    let missing = "01a1fd80-0fe6-7089-a9ee-9e24acd337e6";
    let (status, _, _) = send(app.client.get(deck_check(missing, ""))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn format_checks_on_the_memory_store() {
    scenario(&TestApp::memory().await).await;
}

#[tokio::test]
async fn format_checks_on_postgres() {
    scenario(&TestApp::postgres().await).await;
}
