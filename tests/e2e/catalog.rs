//! Games, formats, catalog import and card resolution over HTTP, on the bundled catalog.

use deckhand_domain::catalog::format_id;
use deckhand_testkit::app::TestApp;
use deckhand_testkit::fixtures::printing;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const KARN_VARIANT: &str = "07a3d9e8-8597-498b-869c-cff79e0df516";
const KARN_CARD: &str = "060209fa-4b7d-4e08-bf8b-8759bba5641b";
const CHOSEN_STAR: &str = "82072a1d-c1ab-4b4f-875f-d0591447e0a4";
const CADET: &str = "81a5ec5a-b490-456a-98e8-36cf4b836d2a";
const BOLAS: &str = "7b215968-93a6-4278-ac61-4e3e8c3c3943";

async fn resolve(app: &TestApp, body: Value) -> (StatusCode, Value) {
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/cards/resolve"))
            .json(&body),
    )
    .await;
    (status, body)
}

#[tokio::test]
async fn games_and_formats_are_listed_for_anyone() {
    let app = TestApp::memory().await;
    let (status, _, games) = send(app.client.get(app.api("/games"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        games[0],
        json!({
            "slug": "mtg",
            "name": "Magic: The Gathering",
            "sections": [
                {"key": "commander", "label": "Commander", "counted": true},
                {"key": "companion", "label": "Companion", "counted": true},
                {"key": "mainboard", "label": "Deck", "counted": true},
                {"key": "sideboard", "label": "Sideboard", "counted": true},
                {"key": "maybeboard", "label": "Maybeboard", "counted": false},
            ],
            "colors": ["W", "U", "B", "R", "G"],
        })
    );
    assert_eq!(games[1]["slug"], "lorcana");

    let (status, _, formats) = send(app.client.get(app.api("/games/mtg/formats"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(formats.as_array().unwrap().len(), 7);
    assert_eq!(
        formats[0],
        json!({"id": format_id("mtg", "standard"), "slug": "standard", "name": "Standard",
               "rules": {"main_min": 60, "main_max": null, "sideboard_max": 15, "copy_limit": 4,
                         "singleton": false, "commander": null}})
    );
    assert_eq!(
        formats[0]["id"], "73a4c093-7d6f-51f9-850b-647254ef1a6a",
        "format ids never change"
    );

    let (status, _, body) = send(app.client.get(app.api("/games/chess/formats"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
}

/// Every identifier kind in one request, on both stores.
async fn every_kind_resolves(app: TestApp) {
    let identifiers = json!([
        {"variantId": KARN_VARIANT},
        {"catalog_a_id": "162259"},
        {"catalog_b_id": "67467"},
        {"catalog_c_id": "67106"},
        {"set": "10E", "collector_number": "1★"},
        {"set": "8ed", "collector_number": "S1"},
        {"cardId": KARN_CARD},
        {"name": "nicol bolas, THE RAVAGER"},
        {},
        {"name": "Lightnig Bolt"},
        {"variantId": "", "name": "  ", "set": ""},
    ]);
    let (status, body) = resolve(&app, json!({"identifiers": identifiers})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let resolved: Vec<(u64, &str, &str)> = body["resolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            (
                item["index"].as_u64().unwrap(),
                item["matched_by"].as_str().unwrap(),
                item["card"]["variantId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        resolved,
        [
            (0, "variant_id", KARN_VARIANT),
            (1, "catalog_a_id", KARN_VARIANT),
            (2, "catalog_b_id", KARN_VARIANT),
            (3, "catalog_c_id", KARN_VARIANT),
            (4, "set_and_collector_number", CHOSEN_STAR),
            (5, "set_and_collector_number", CADET),
            (6, "card_id", KARN_VARIANT),
            (7, "name", BOLAS),
        ]
    );
    assert_eq!(
        body["resolved"][0],
        json!({
            "index": 0,
            "input": {"variantId": KARN_VARIANT},
            "matched_by": "variant_id",
            "card": {
                "cardId": KARN_CARD,
                "variantId": KARN_VARIANT,
                "name": "Karn, Scion of Urza",
                "set": "dom",
                "collector_number": "1",
                "type_line": "Legendary Planeswalker — Karn",
                "imageUrl": "https://img.scryfall.com/cards/normal/en/dom/1.jpg?1524789999",
                "colors": [],
                "catalog_a_id": "162259",
                "catalog_b_id": "67467",
                "catalog_c_id": "67106",
            }
        })
    );
    // A double-faced card: found by its front face, colours from its faces in W U B R G order.
    let bolas = &body["resolved"][7]["card"];
    assert_eq!(
        bolas["name"],
        "Nicol Bolas, the Ravager // Nicol Bolas, the Arisen"
    );
    assert_eq!(bolas["colors"], json!(["U", "B", "R"]));
    assert_eq!(
        body["unresolved"],
        json!([
            {"index": 8, "input": {}, "reason": "empty"},
            {"index": 9, "input": {"name": "Lightnig Bolt"}, "reason": "not_found"},
            {"index": 10, "input": {"variantId": "", "name": "  ", "set": ""}, "reason": "empty"},
        ])
    );
}

#[tokio::test]
async fn every_identifier_kind_resolves_on_memory() {
    every_kind_resolves(TestApp::memory().await).await;
}

#[tokio::test]
async fn every_identifier_kind_resolves_on_postgres() {
    every_kind_resolves(TestApp::postgres().await).await;
}

#[tokio::test]
async fn strict_mode_comes_from_the_query_or_the_body() {
    let app = TestApp::memory().await;
    let mixed = json!([{"name": "Karn, Scion of Urza"}, {"name": "No Such Card"}]);

    let (status, body) = resolve(&app, json!({"identifiers": mixed})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["unresolved"][0]["index"], 1);

    let expected = json!({"unresolved": [
        {"index": 1, "input": {"name": "No Such Card"}, "reason": "not_found"}
    ]});
    let (status, body) = resolve(&app, json!({"identifiers": mixed, "strict": true})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        assert_envelope(&body, "SERVICE_CARD_RESOLUTION_FAILED"),
        expected
    );

    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/cards/resolve?strict=true"))
            .json(&json!({"identifiers": mixed, "strict": false})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        assert_envelope(&body, "SERVICE_CARD_RESOLUTION_FAILED"),
        expected
    );

    // Strict with everything resolved is a plain 200; a form body means the same as JSON.
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/cards/resolve?strict=true"))
            .form(&[
                ("identifiers", r#"[{"name": "assure"}]"#),
                ("strict", "true"),
            ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["resolved"][0]["card"]["name"], "Assure // Assemble");
    assert_eq!(body["unresolved"], json!([]));

    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/cards/resolve?strict=maybe"))
            .json(&json!({"identifiers": []})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
}

#[tokio::test]
async fn formats_filter_and_unknown_formats_are_refused() {
    let app = TestApp::memory().await;
    let identifiers = json!([{"variantId": KARN_VARIANT}, {"variantId": CADET}]);
    for format in [json!("standard"), json!(format_id("mtg", "standard"))] {
        let (status, body) =
            resolve(&app, json!({"identifiers": identifiers, "format": format})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["resolved"][0]["card"]["variantId"], KARN_VARIANT);
        assert_eq!(
            body["unresolved"],
            json!([{"index": 1, "input": {"variantId": CADET}, "reason": "not_legal_in_format"}])
        );
    }
    for format in ["frontier", "core", "0f0f0f0f-0000-0000-0000-000000000000"] {
        let (status, body) =
            resolve(&app, json!({"identifiers": identifiers, "format": format})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{format}");
        let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], "format");
    }
}

#[tokio::test]
async fn at_most_1000_identifiers_and_a_valid_body() {
    let app = TestApp::memory().await;
    let many = |n: usize| vec![json!({"name": "Karn, Scion of Urza"}); n];

    let (status, body) = resolve(&app, json!({"identifiers": many(1000)})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["resolved"].as_array().unwrap().len(), 1000);

    let (status, body) = resolve(&app, json!({"identifiers": many(1001)})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    assert_eq!(details["fields"][0]["field"], "identifiers");
    assert_eq!(details["fields"][0]["code"], "too_many");

    for bad in [
        json!({}),
        json!({"identifiers": [{"colour": "red"}]}),
        json!({"identifiers": [{"name": 7}]}),
        json!({"identifiers": [], "extra": 1}),
    ] {
        let (status, body) = resolve(&app, bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn anonymous_callers_may_resolve_and_authenticated_ones_need_decks_read() {
    let app = TestApp::memory().await;
    let body = json!({"identifiers": [{"name": "Assure"}]});
    let (_, reader) = app.user_with_token("reader", "decks:read").await;
    let (_, writer) = app.user_with_token("writer", "decks:write").await;
    let url = app.api("/games/mtg/cards/resolve");

    let (status, _, _) = send(app.client.post(&url).bearer_auth(&reader).json(&body)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, denied) = send(app.client.post(&url).bearer_auth(&writer).json(&body)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let details = assert_envelope(&denied, "SERVICE_INSUFFICIENT_SCOPE");
    assert_eq!(details["required"], json!(["decks:read"]));

    let (status, _, missing) = send(
        app.client
            .post(app.api("/games/chess/cards/resolve"))
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&missing, "SERVICE_NOT_FOUND");
}

#[tokio::test]
async fn two_cards_behind_one_name_are_ambiguous() {
    let app = TestApp::postgres().await;
    let game = app.services.catalog.game("mtg").await.unwrap();
    let twins = [
        printing(uuid::Uuid::new_v4(), "Twin Soul", "aaa", "1"),
        printing(uuid::Uuid::new_v4(), "Twin Soul", "bbb", "2"),
    ];
    app.services
        .catalog
        .import_batch(&game, &twins, deckhand_testkit::fixtures::now())
        .await
        .unwrap();
    let (status, body) = resolve(
        &app,
        json!({"identifiers": [{"name": "twin soul"}, {"name": "Twin Soul", "set": "bbb", "collector_number": "2"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["unresolved"][0]["reason"], "ambiguous");
    assert_eq!(body["resolved"][0]["index"], 1);
}

/// The sample file (a JSON array) and a generic JSON Lines file through the admin command;
/// a second import changes nothing.
#[tokio::test]
async fn catalog_files_import_idempotently() {
    let app = TestApp::postgres().await;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    // `shared/` sits beside the checkout: `../shared` of the main one, further up for worktrees.
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/data/mtg/sample-cards.json"))
        .find(|path| path.is_file())
        .expect("shared/data/mtg/sample-cards.json beside the checkout");
    let sample = sample.to_str().unwrap().to_owned();
    let first = app
        .admin(&[
            "catalog",
            "import",
            "--game",
            "mtg",
            "--source",
            "scryfall",
            "--as-of",
            "2019-04-01",
            &sample,
        ])
        .await
        .unwrap();
    assert_eq!(first["game"], "mtg");
    assert_eq!(first["read"], 867);
    assert_eq!(first["skipped"], 0);
    let again = app
        .admin(&[
            "catalog",
            "import",
            "--game",
            "mtg",
            "--source",
            "scryfall",
            "--as-of",
            "2019-04-01",
            &sample,
        ])
        .await
        .unwrap();
    assert_eq!(again, first);

    let lorcana = format!("{root}/crates/app/data/lorcana-demo.jsonl");
    let report = app
        .admin(&[
            "catalog",
            "import",
            "--game",
            "lorcana",
            "--source",
            "generic",
            "--as-of",
            "2026-01-01",
            &lorcana,
        ])
        .await
        .unwrap();
    assert_eq!(
        (report["cards"].as_u64(), report["printings"].as_u64()),
        (Some(6), Some(6))
    );
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/lorcana/cards/resolve"))
            .json(&json!({"identifiers": [{"name": "demo tide sorcerer"}], "format": "core"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["resolved"][0]["card"]["colors"], json!(["Sapphire"]));

    let wrong = app
        .admin(&[
            "catalog",
            "import",
            "--game",
            "chess",
            "--source",
            "generic",
            "--as-of",
            "2026-01-01",
            &lorcana,
        ])
        .await;
    assert!(wrong.is_err());
    // A file whose name does not say its day needs the day.
    let undated = app
        .admin(&[
            "catalog", "import", "--game", "lorcana", "--source", "generic", &lorcana,
        ])
        .await
        .unwrap_err();
    assert!(format!("{undated:#}").contains("--as-of"), "{undated:#}");
}
