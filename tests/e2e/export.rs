//! The text export over HTTP: stored decks (visibility, cache), inline payloads (cards or
//! text, warnings header), content negotiation, and the requests it must refuse.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const ALL_DECK_SCOPES: &str = "decks:read decks:write";

fn export_url(app: &TestApp) -> String {
    app.api("/games/mtg/decks/export/text")
}

/// Sends a request and returns status, headers and the raw body.
async fn send_raw(request: reqwest::RequestBuilder) -> (StatusCode, HeaderMap, String) {
    let response = request
        .send()
        .await
        .expect("the request reaches the server");
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.text().await.expect("a body"))
}

/// Exports with a JSON body and returns the text, checking the JSON-string form.
async fn export(app: &TestApp, token: Option<&str>, body: Value) -> (String, HeaderMap) {
    let mut request = app.client.post(export_url(app)).json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let (status, headers, body) = send(request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(headers["content-type"], "application/json");
    (body.as_str().expect("a JSON string").to_owned(), headers)
}

fn warnings(headers: &HeaderMap) -> Vec<String> {
    let value = headers["x-service-export-warnings"].to_str().unwrap();
    assert!(value.is_ascii(), "{value}");
    serde_json::from_str(value).unwrap()
}

async fn create(app: &TestApp, token: &str, body: Value) -> String {
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    record["id"].as_str().unwrap().to_owned()
}

fn commander_deck(visibility: &str) -> Value {
    json!({
        "name": "Chromium Control",
        "visibility": [visibility],
        "cards": [
            {"section": "commander", "quantity": 1, "name": "chromium, the mutable"},
            {"section": "mainboard", "quantity": 30, "name": "Island", "set": "dom"},
            {"section": "mainboard", "quantity": 2, "name": "Dimir Spybug"},
            {"section": "mainboard", "quantity": 1, "name": "Find // Finality"},
            {"section": "mainboard", "quantity": 1, "name": "Nicol Bolas, the Ravager"},
            {"section": "mainboard", "quantity": 2, "name": "Dimir Spybug"},
            {"section": "sideboard", "quantity": 1, "name": "Siege Wurm", "foil": true},
            {"section": "maybeboard", "quantity": 4, "name": "Siege Wurm"}
        ]
    })
}

/// The commander deck as the export writes it, byte for byte.
/// Sections in game order under their labels, one blank line between blocks, the two Spybug
/// entries merged, lines sorted by name, `(SET) number` in upper case, foil marked, the
/// maybeboard left out, a final newline.
const COMMANDER_DECK_TEXT: &str = "\
Commander
1 Chromium, the Mutable (M19) 214

Deck
4 Dimir Spybug (GRN) 166
1 Find // Finality (GRN) 225
30 Island (DOM) 254
1 Nicol Bolas, the Ravager // Nicol Bolas, the Arisen (M19) 218

Sideboard
1 Siege Wurm (GRN) 144 *F*
";

#[tokio::test]
async fn a_public_deck_exports_for_anonymous_callers_byte_for_byte() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;

    let (text, headers) = export(&app, None, json!({"deck_id": id})).await;
    assert_eq!(text, COMMANDER_DECK_TEXT);
    assert!(
        headers.get("x-service-export-warnings").is_none(),
        "stored decks carry no warnings header"
    );
    assert_eq!(headers["vary"], "Accept");
}

#[tokio::test]
async fn accept_text_plain_gets_the_raw_text_and_everything_else_json() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;
    let post = || {
        app.client
            .post(export_url(&app))
            .json(&json!({"deck_id": id}))
    };

    let (status, headers, body) = send_raw(post().header("accept", "text/plain")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(body, COMMANDER_DECK_TEXT);

    let (_, headers, body) =
        send_raw(post().header("accept", "application/json;q=0.5, text/*")).await;
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(body, COMMANDER_DECK_TEXT);

    let json_string = serde_json::to_string(COMMANDER_DECK_TEXT).unwrap();
    for accept in [
        None,
        Some("*/*"),
        Some("application/json"),
        Some("text/html"),
        Some("text/plain, application/json"),
    ] {
        let mut request = post();
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        let (status, headers, body) = send_raw(request).await;
        assert_eq!(status, StatusCode::OK, "{accept:?}");
        assert_eq!(headers["content-type"], "application/json", "{accept:?}");
        assert_eq!(body, json_string, "{accept:?}");
    }
}

#[tokio::test]
async fn hidden_decks_export_for_their_owner_only_even_once_cached() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    for level in ["private", "unlisted"] {
        let id = create(&app, &alice, commander_deck(level)).await;
        // The owner's export fills the cache first; others must still get a 404.
        let (text, _) = export(&app, Some(&alice), json!({"deck_id": id})).await;
        assert_eq!(text, COMMANDER_DECK_TEXT);
        for request in [
            app.client.post(export_url(&app)),
            app.client.post(export_url(&app)).bearer_auth(&bob),
        ] {
            let (status, _, body) = send(request.json(&json!({"deck_id": id}))).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{level}");
            assert_envelope(&body, "SERVICE_NOT_FOUND");
        }
    }
    // A deck of another game, an unknown deck and an unknown game are not found either.
    let id = create(&app, &alice, commander_deck("public")).await;
    for (url, deck_id) in [
        (app.api("/games/lorcana/decks/export/text"), id.clone()),
        (export_url(&app), uuid::Uuid::nil().to_string()),
        (app.api("/games/nope/decks/export/text"), id.clone()),
    ] {
        let (status, _, body) =
            send(app.client.post(&url).json(&json!({"deck_id": deck_id}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{url}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
}

#[tokio::test]
async fn a_patch_changes_the_export_at_once() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;
    let (before, _) = export(&app, None, json!({"deck_id": id})).await;
    let (again, _) = export(&app, None, json!({"deck_id": id})).await;
    assert_eq!(before, again);

    let (status, _, body) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&alice)
            .json(&json!({"cards": [{"section": "mainboard", "quantity": 4, "name": "Island", "set": "dom"}]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (after, _) = export(&app, None, json!({"deck_id": id})).await;
    assert_eq!(after, "Deck\n4 Island (DOM) 254\n");

    // Hiding the deck hides its export at once, cached render or not.
    let (status, _, _) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&alice)
            .json(&json!({"visibility": ["private"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = send(
        app.client
            .post(export_url(&app))
            .json(&json!({"deck_id": id})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn exactly_one_of_deck_id_and_deck_payload_and_of_cards_and_text() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;
    let cards = json!({"cards": [{"section": "mainboard", "quantity": 1, "name": "Island"}]});
    for (body, field) in [
        (json!({}), "body"),
        (json!({"deck_id": id, "deck_payload": cards}), "body"),
        (json!({"deck_payload": {"name": "x"}}), "deck_payload"),
        (
            json!({"deck_payload": {"text": "1 Island", "cards": []}}),
            "deck_payload",
        ),
    ] {
        let (status, _, answer) = send(app.client.post(export_url(&app)).json(&body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let details = assert_envelope(&answer, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], field, "{body}");
        assert_eq!(details["fields"][0]["code"], "one_of", "{body}");
    }
    for (body, field) in [
        (
            json!({"deck_payload": {"cards": [{"section": "tokens", "quantity": 1, "name": "Island"}]}}),
            "deck_payload.cards[0].section",
        ),
        (
            json!({"deck_payload": {"cards": [{"section": "mainboard", "quantity": 0, "name": "Island"}]}}),
            "deck_payload.cards[0].quantity",
        ),
        (
            json!({"deck_payload": {"name": "n".repeat(256), "text": ""}}),
            "deck_payload.name",
        ),
        (json!({"deck_id": "not-a-uuid"}), "deck_id"),
        (
            json!({"deck_payload": {"text": "", "colour": "red"}}),
            "deck_payload",
        ),
    ] {
        let (status, _, answer) = send(app.client.post(export_url(&app)).json(&body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let details = assert_envelope(&answer, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], field, "{answer}");
    }
}

#[tokio::test]
async fn payload_cards_export_unresolved_names_by_name_with_warnings() {
    let app = TestApp::memory().await;
    let (text, headers) = export(
        &app,
        None,
        json!({"deck_payload": {"name": "Brew", "cards": [
            {"section": "mainboard", "quantity": 4, "name": "island"},
            {"section": "mainboard", "quantity": 3, "name": "Lightnig Bolt"},
            {"section": "sideboard", "quantity": 2, "variantId": "00000000-0000-0000-0000-000000000000"},
            {"section": "commander", "quantity": 1, "name": "Chromium, the Mutable", "foil": true},
            {"section": "maybeboard", "quantity": 1, "name": "Nothing Like This"}
        ]}}),
    )
    .await;
    let island = text
        .lines()
        .find(|line| line.contains("Island"))
        .unwrap()
        .to_owned();
    assert!(island.starts_with("4 Island ("), "{island}");
    assert_eq!(
        text,
        format!(
            "Commander\n1 Chromium, the Mutable (M19) 214 *F*\n\nDeck\n{island}\n3 Lightnig Bolt\n"
        )
    );
    assert_eq!(
        warnings(&headers),
        [
            r#"cards[1]: no card named "Lightnig Bolt""#,
            r#"cards[2]: no card matches variantId "00000000-0000-0000-0000-000000000000"; left out"#,
        ]
    );
    assert_eq!(headers["vary"], "Accept");
}

#[tokio::test]
async fn payload_text_warns_with_line_numbers_in_ascii() {
    let app = TestApp::memory().await;
    let pasted = "Deck\n4 Island (DOM) 254\n3 Lightnig Bolt\n0 Siege Wurm\nCreatures:\n1 Jötun Grunt\nSB: 1 Siege Wurm *F*\nMaybeboard\n1 Dimir Spybug\n";
    let (text, headers) = export(&app, None, json!({"deck_payload": {"text": pasted}})).await;
    assert_eq!(
        text,
        "Deck\n4 Island (DOM) 254\n1 Jötun Grunt\n3 Lightnig Bolt\n\nSideboard\n1 Siege Wurm (GRN) 144 *F*\n"
    );
    let raw = headers["x-service-export-warnings"].to_str().unwrap();
    assert!(raw.contains(r#"J\u00f6tun Grunt"#), "{raw}");
    assert_eq!(
        warnings(&headers),
        [
            r#"line 3: no card named "Lightnig Bolt""#,
            r#"line 4: quantity 0 is not between 1 and 999 in "0 Siege Wurm""#,
            r#"line 5: unknown section header "Creatures:""#,
            r#"line 6: no card named "Jötun Grunt""#,
        ]
    );
}

#[tokio::test]
async fn an_exported_deck_read_back_as_text_exports_the_same() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;
    let (exported, _) = export(&app, None, json!({"deck_id": id})).await;
    let (again, headers) = export(&app, None, json!({"deck_payload": {"text": exported}})).await;
    assert_eq!(again, exported);
    assert_eq!(headers["x-service-export-warnings"], "[]");
}

#[tokio::test]
async fn a_write_only_token_gets_403_and_a_reader_gets_the_text() {
    let app = TestApp::memory().await;
    let (_, writer) = app.user_with_token("writer", "decks:write").await;
    let id = create(&app, &writer, commander_deck("public")).await;
    for body in [
        json!({"deck_id": id}),
        json!({"deck_payload": {"text": "1 Island"}}),
    ] {
        let (status, _, answer) = send(
            app.client
                .post(export_url(&app))
                .bearer_auth(&writer)
                .json(&body),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        let details = assert_envelope(&answer, "SERVICE_INSUFFICIENT_SCOPE");
        assert_eq!(
            details,
            json!({"required": ["decks:read"], "granted": ["decks:write"]})
        );
    }
    let (_, reader) = app.user_with_token("reader", "decks:read").await;
    let (text, _) = export(&app, Some(&reader), json!({"deck_id": id})).await;
    assert_eq!(text, COMMANDER_DECK_TEXT);
}

#[tokio::test]
async fn form_and_multipart_bodies_carry_deck_payload_as_json_text() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;
    let payload = r#"{"cards":[{"section":"mainboard","quantity":2,"name":"Siege Wurm","set":"grn","collector_number":"144"}]}"#;

    let (status, headers, body) = send(
        app.client
            .post(export_url(&app))
            .form(&[("deck_payload", payload)]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, "Deck\n2 Siege Wurm (GRN) 144\n");
    assert_eq!(headers["x-service-export-warnings"], "[]");

    let form = reqwest::multipart::Form::new().text("deck_payload", payload);
    let (status, _, body) = send(app.client.post(export_url(&app)).multipart(form)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, "Deck\n2 Siege Wurm (GRN) 144\n");

    let (status, _, body) = send(
        app.client
            .post(export_url(&app))
            .form(&[("deck_id", id.as_str())]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, COMMANDER_DECK_TEXT);

    let (status, _, body) = send(
        app.client
            .post(export_url(&app))
            .form(&[("deck_payload", "{not json")]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
}

#[tokio::test]
async fn stored_decks_export_the_same_on_postgres() {
    let app = TestApp::postgres().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let id = create(&app, &alice, commander_deck("public")).await;
    let (text, _) = export(&app, None, json!({"deck_id": id})).await;
    assert_eq!(text, COMMANDER_DECK_TEXT);
    let (again, _) = export(&app, None, json!({"deck_payload": {"text": text}})).await;
    assert_eq!(again, COMMANDER_DECK_TEXT);
}

#[tokio::test]
async fn the_documented_curl_example_answers_as_documented() {
    let app = TestApp::memory().await;
    let text = "Deck\n4 island\n3 Lightnig Bolt\n\nSideboard\n1 Siege Wurm *F*";
    let (status, headers, body) = send_raw(
        app.client
            .post(export_url(&app))
            .header("accept", "text/plain")
            .json(&json!({"deck_payload": {"text": text}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers["x-service-export-warnings"],
        r#"["line 3: no card named \"Lightnig Bolt\""]"#
    );
    assert_eq!(
        body,
        "Deck\n4 Island (GRN) 261\n3 Lightnig Bolt\n\nSideboard\n1 Siege Wurm (GRN) 144 *F*\n"
    );
}
