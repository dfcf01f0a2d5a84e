//! Flesh and Blood over HTTP (issue 43), on both stores: the slice of the real file imported
//! through the admin command (twice: nothing changes), its cards resolved by every `fab`
//! identifier, a deck made of them exported as text and read back to the same text.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::send;

const SLICE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../crates/app/data/fab-demo.jsonl"
);

async fn import(app: &TestApp) -> Value {
    app.admin(&[
        "catalog",
        "import",
        "--game",
        "fab",
        "--source",
        "fab-cards",
        "--as-of",
        "2026-05-16",
        SLICE,
    ])
    .await
    .unwrap()
}

async fn export_text(app: &TestApp, token: &str, body: Value) -> String {
    let (status, _, text) = send(
        app.client
            .post(app.api("/games/fab/decks/export/text"))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    text.as_str().unwrap().to_owned()
}

async fn fab_imports_resolves_and_round_trips(app: TestApp) {
    let first = import(&app).await;
    assert_eq!(first["game"], "fab");
    assert_eq!(
        (first["read"].as_u64(), first["cards"].as_u64()),
        (Some(40), Some(40))
    );
    assert_eq!(import(&app).await, first, "a second import changes nothing");

    let identifiers = json!([
        {"name": "Sink Below", "pitch": 1},
        {"name": "Sink Below", "pitch": "blue"},
        {"name": "Sink Below"},
        {"cardIdentifier": "dorinthea-ironsong"},
        {"print": "WTR216"},
        {"set_code": "WTR", "collector_number": "217"},
    ]);
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/fab/cards/resolve"))
            .json(&json!({"identifiers": identifiers})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let resolved: Vec<(u64, &str, &str)> = body["resolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["index"].as_u64().unwrap(),
                item["matched_by"].as_str().unwrap(),
                item["card"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        resolved,
        [
            (0, "name", "Sink Below (red)"),
            (1, "name", "Sink Below (blue)"),
            (3, "catalog_b_id", "Dorinthea Ironsong"),
            (4, "set_and_collector_number", "Sink Below (yellow)"),
            (5, "set_and_collector_number", "Sink Below (blue)"),
        ]
    );
    assert_eq!(
        body["resolved"][0]["input"],
        json!({"name": "Sink Below", "pitch": "1"})
    );
    assert_eq!(body["resolved"][0]["card"]["colors"], json!(["red"]));
    assert_eq!(
        body["unresolved"],
        json!([{"index": 2, "input": {"name": "Sink Below"}, "reason": "ambiguous"}])
    );
    let tcgplayer = body["resolved"][2]["card"]["catalog_a_id"].clone();
    let (_, _, by_tcgplayer) = send(
        app.client
            .post(app.api("/games/fab/cards/resolve"))
            .json(&json!({"identifiers": [{"tcgplayer_id": tcgplayer}]})),
    )
    .await;
    assert_eq!(
        by_tcgplayer["resolved"][0]["card"]["name"],
        "Dorinthea Ironsong"
    );

    // A deck by card entries, exported, and its text read back to the same text.
    let (_, token) = app
        .user_with_token("fabian", "decks:read decks:write")
        .await;
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/fab/decks"))
            .bearer_auth(&token)
            .json(&json!({
                "name": "Dorinthea",
                "cards": [
                    {"section": "hero", "quantity": 1, "cardIdentifier": "dorinthea-ironsong"},
                    {"section": "arena", "quantity": 1, "name": "Dawnblade"},
                    {"section": "deck", "quantity": 3, "name": "Sink Below", "pitch": 1},
                    {"section": "deck", "quantity": 2, "name": "Sink Below", "pitch": "yellow"},
                    {"section": "deck", "quantity": 3, "print": "WTR217"},
                ],
            })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let text = export_text(&app, &token, json!({"deck_id": record["id"]})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Hero");
    assert!(lines[1].starts_with("1 Dorinthea Ironsong ("), "{text}");
    assert!(text.contains("\n\nArena\n1 Dawnblade ("), "{text}");
    assert!(text.contains("\n\nDeck\n3 Sink Below (blue) ("), "{text}");
    assert!(text.contains("\n3 Sink Below (red) ("), "{text}");
    assert!(text.contains("\n2 Sink Below (yellow) ("), "{text}");
    let again = export_text(&app, &token, json!({"deck_payload": {"text": text}})).await;
    assert_eq!(again, text);
    // The plain form players write reads as the same cards.
    let plain = "Hero\n1 Dorinthea Ironsong\n\nDeck\n3x Sink Below (red)\n2 Sink Below (Yellow)\n";
    let read = export_text(&app, &token, json!({"deck_payload": {"text": plain}})).await;
    assert!(read.contains("3 Sink Below (red) ("), "{read}");
    assert!(read.contains("2 Sink Below (yellow) ("), "{read}");
}

#[tokio::test]
async fn fab_imports_resolves_and_round_trips_in_memory() {
    fab_imports_resolves_and_round_trips(TestApp::memory().await).await;
}

#[tokio::test]
async fn fab_imports_resolves_and_round_trips_on_postgres() {
    fab_imports_resolves_and_round_trips(TestApp::postgres().await).await;
}

/// `cargo run`'s demo: a public Dorinthea Ironsong deck in Classic Constructed, every card of it
/// resolved from the bundled fab catalog.
#[tokio::test]
async fn the_demo_seeds_a_classic_constructed_dorinthea_deck() {
    let app = TestApp::memory().await;
    let demo = app.admin(&["demo", "seed"]).await.unwrap();
    let id = demo["fab_deck_id"].as_str().unwrap();
    let (status, _, deck) = send(
        app.client
            .get(app.api(&format!("/games/fab/decks/{id}?expand=cards"))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{deck}");
    assert_eq!(deck["name"], "Dorinthea Ironsong");
    assert_eq!(deck["format"]["slug"], "cc");
    let (_, _, list) = send(app.client.get(app.api("/games/fab/decks?include=summary"))).await;
    let item = &list["data"][0];
    assert_eq!(item["id"], id);
    assert_eq!(
        item["section_counts"],
        json!({"hero": 1, "arena": 3, "deck": 69})
    );
    assert_eq!(item["colors"], json!(["red", "yellow", "blue"]));
    let sections: Vec<(&str, u64)> = deck["expanded_cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|section| {
            (
                section["label"].as_str().unwrap(),
                section["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(sections, [("Hero", 1), ("Arena", 3), ("Deck", 69)]);
    assert_eq!(
        deck["expanded_cards"][0]["cards"][0]["name"],
        "Dorinthea Ironsong"
    );
}

/// The whole real file (`../shared/data/fab`, beside the checkout): every record reads, card
/// backs are skipped, and a second import changes nothing. Prints how long each import took.
async fn the_whole_file_imports(app: TestApp) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/data/fab/fab-cards-3.8.6.jsonl.gz"))
        .find(|path| path.is_file())
        .expect("shared/data/fab/fab-cards-3.8.6.jsonl.gz beside the checkout");
    let file = file.to_str().unwrap().to_owned();
    let args = [
        "catalog",
        "import",
        "--game",
        "fab",
        "--source",
        "fab-cards",
        "--as-of",
        "2026-05-16",
        &file,
    ];
    let started = std::time::Instant::now();
    let first = app.admin(&args).await.unwrap();
    let once = started.elapsed();
    assert_eq!(
        first,
        json!({"game": "fab", "cards": 4656, "printings": 15488, "read": 4682, "skipped": 26})
    );
    let started = std::time::Instant::now();
    assert_eq!(app.admin(&args).await.unwrap(), first);
    eprintln!(
        "fab import: {once:?} the first time, {:?} again",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_whole_file_imports_in_memory() {
    the_whole_file_imports(TestApp::memory().await).await;
}

#[tokio::test]
async fn the_whole_file_imports_on_postgres() {
    the_whole_file_imports(TestApp::postgres().await).await;
}
