//! Card search and card statistics over HTTP, on both stores (contract, "Card search and card
//! statistics"): `cards=` and `excludeCards=` with the read rule and the other filters, their
//! refusals in the envelope, and a card's statistics, the same from every instance.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

/// The card id of each name, through the resolve endpoint.
async fn card_ids(app: &TestApp, names: &[&str]) -> Vec<String> {
    let identifiers: Vec<Value> = names.iter().map(|name| json!({"name": name})).collect();
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/cards/resolve"))
            .json(&json!({"identifiers": identifiers})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["resolved"]
        .as_array()
        .expect("resolved")
        .iter()
        .map(|item| item["card"]["cardId"].as_str().unwrap().to_owned())
        .collect()
}

fn names(page: &Value) -> Vec<&str> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|deck| deck["name"].as_str().unwrap())
        .collect()
}

fn refusal(body: &Value) -> (String, String) {
    let details = assert_envelope(body, "SERVICE_VALIDATION_ERROR");
    let field = &details["fields"][0];
    (
        field["field"].as_str().unwrap().to_owned(),
        field["code"].as_str().unwrap().to_owned(),
    )
}

async fn scenario(app: &TestApp) {
    let ids = card_ids(app, &["Siege Wurm", "Lyra Dawnbringer", "Island"]).await;
    let [wurm, lyra, island] = [&ids[0], &ids[1], &ids[2]];
    let (_, alice) = app.user_with_token("alice", "decks:read decks:write").await;
    let modern = "59b2f751-ebfb-5171-bef0-554ccfd0df1b";
    let decks = [
        (
            "One",
            "public",
            json!([
            {"section": "mainboard", "quantity": 4, "name": "Siege Wurm"},
            {"section": "mainboard", "quantity": 20, "name": "Island"},
            {"section": "sideboard", "quantity": 1, "name": "Lyra Dawnbringer"}]),
        ),
        (
            "Two",
            "public",
            json!([
            {"section": "mainboard", "quantity": 2, "name": "Siege Wurm"},
            {"section": "mainboard", "quantity": 3, "name": "Lyra Dawnbringer"}]),
        ),
        (
            "Three",
            "public",
            json!([
            {"section": "mainboard", "quantity": 2, "name": "Lyra Dawnbringer"},
            {"section": "maybeboard", "quantity": 3, "name": "Siege Wurm"}]),
        ),
        (
            "Mine",
            "private",
            json!([
            {"section": "mainboard", "quantity": 4, "name": "Siege Wurm"}]),
        ),
    ];
    for (name, visibility, cards) in decks {
        let (status, _, record) = send(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&alice)
                .json(
                    &json!({"name": name, "visibility": [visibility], "format": modern,
                              "cards": cards}),
                ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{record}");
    }

    let list = |query: String, token: Option<&str>| {
        let mut request = app.client.get(app.api(&format!(
            "/games/mtg/decks?sort=createdAt&order=asc&{query}"
        )));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        send(request)
    };
    let (status, _, page) = list(format!("cards={wurm}"), None).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(names(&page), ["One", "Two"], "a maybeboard does not count");
    assert_eq!(page["pagination"]["total"], 2);
    assert_eq!(page["pagination"]["total_exact"], true);
    let (_, _, page) = list(format!("cards={wurm}"), Some(&alice)).await;
    assert_eq!(
        names(&page),
        ["One", "Two", "Mine"],
        "the owner's private deck too"
    );
    let (_, _, page) = list(format!("cards={wurm},{lyra}"), None).await;
    assert_eq!(names(&page), ["One", "Two"]);
    let (_, _, page) = list(format!("cards={wurm}&excludeCards={island}"), None).await;
    assert_eq!(names(&page), ["Two"]);
    let (_, _, page) = list(format!("excludeCards={wurm}&q=thr"), None).await;
    assert_eq!(names(&page), ["Three"]);
    let (status, _, page) = send(app.client.get(app.api(&format!(
        "/games/mtg/decks?cards={lyra}&sort=views&limit=1&page=2"
    ))))
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["pagination"]["total"], 3);

    // Refusals name the parameter.
    let (status, _, body) = list("cards=not-a-card".into(), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refusal(&body), ("cards".into(), "invalid".into()));
    let unknown = "00000000-0000-4000-8000-000000000000";
    let (status, _, body) = list(format!("excludeCards={unknown}"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refusal(&body), ("excludeCards".into(), "unknown".into()));
    let (status, _, body) = list(format!("cards={wurm},{unknown}"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refusal(&body), ("cards".into(), "unknown".into()));
    let eleven: Vec<String> = (1..=11)
        .map(|n| format!("00000000-0000-4000-8000-{n:012}"))
        .collect();
    let (status, _, body) = list(format!("cards={}", eleven.join(",")), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refusal(&body), ("cards".into(), "too_many".into()));

    // Statistics, anonymous: the public decks of the format; the basic land left out.
    let stats = |card: &str, query: &str| {
        app.client
            .get(app.api(&format!("/games/mtg/cards/{card}/stats{query}")))
    };
    let (status, _, body) = send(stats(wurm, "?format=modern")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["card"], json!({"cardId": wurm, "name": "Siege Wurm"}));
    assert_eq!(
        body["format"],
        json!({"id": modern, "slug": "modern", "name": "Modern"})
    );
    assert_eq!(body["decks"], 2);
    assert!((body["share"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(body["average_copies"], 3.0);
    assert_eq!(
        body["played_with"],
        json!([{"cardId": lyra, "name": "Lyra Dawnbringer", "decks": 2, "share": 1.0}])
    );
    assert!(body["as_of"].as_str().unwrap().ends_with('Z'));
    let (_, _, everywhere) = send(stats(wurm, "")).await;
    assert_eq!(everywhere["format"], Value::Null);
    assert_eq!(everywhere["decks"], 2);

    let (status, _, body) = send(stats(wurm, "?format=no-such-format")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refusal(&body), ("format".into(), "unknown".into()));
    for missing in [unknown, "not-a-uuid"] {
        let (status, _, body) = send(stats(missing, "")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
}

#[tokio::test]
async fn card_search_and_stats_on_the_memory_store() {
    scenario(&TestApp::memory().await).await;
}

#[tokio::test]
async fn card_search_and_stats_on_postgres() {
    let app = TestApp::postgres().await;
    scenario(&app).await;
    // Another instance answers the figures the first gathered.
    let second = app.another_instance().await;
    let path = "/games/mtg/cards/resolve";
    let (_, _, resolved) = send(
        app.client
            .post(app.api(path))
            .json(&json!({"identifiers": [{"name": "Lyra Dawnbringer"}]})),
    )
    .await;
    let lyra = resolved["resolved"][0]["card"]["cardId"].as_str().unwrap();
    let stats = format!("/games/mtg/cards/{lyra}/stats?format=modern");
    let (_, _, first) = send(app.client.get(app.api(&stats))).await;
    let (_, _, other) = send(second.client.get(second.api(&stats))).await;
    assert_eq!(first, other);
    assert_eq!(first["decks"], 3);
}
