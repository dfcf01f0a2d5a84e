//! Collections over HTTP on both stores: CSV imports in Moxfield's and Deckbox's layouts (real
//! files, `tests/e2e/collections/`), the export's round trip, PATCH deltas (a concurrent storm
//! loses none), a deck's needs as JSON and as text, the owner-only events, and every refusal.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const MOXFIELD: &str = include_str!("collections/moxfield.csv");
const DECKBOX: &str = include_str!("collections/deckbox.csv");
const SCOPES: &str = "collection:read collection:write decks:read decks:write";

async fn apps() -> [TestApp; 2] {
    [TestApp::memory().await, TestApp::postgres().await]
}

fn collection(app: &TestApp, rest: &str) -> String {
    app.api(&format!("/games/mtg/collection{rest}"))
}

async fn import(
    app: &TestApp,
    token: &str,
    query: &str,
    content_type: &str,
    body: &str,
) -> (StatusCode, Value) {
    let (status, _, body) = send(
        app.client
            .post(collection(app, &format!("/import{query}")))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body.to_owned()),
    )
    .await;
    (status, body)
}

async fn patch(app: &TestApp, token: &str, changes: Value) -> (StatusCode, Value) {
    let (status, _, body) = send(
        app.client
            .patch(collection(app, ""))
            .bearer_auth(token)
            .json(&json!({ "changes": changes })),
    )
    .await;
    (status, body)
}

/// Every entry as `quantity name set number foil trade`, in the listing's order.
async fn entries(app: &TestApp, token: &str) -> Vec<String> {
    let (status, _, page) = send(
        app.client
            .get(collection(app, "?limit=100"))
            .bearer_auth(token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            format!(
                "{} {} {} {} {} {}",
                entry["quantity"],
                entry["name"].as_str().unwrap(),
                entry["set"].as_str().unwrap(),
                entry["collector_number"].as_str().unwrap(),
                if entry["foil"] == true { "foil" } else { "-" },
                entry["trade_quantity"]
            )
        })
        .collect()
}

async fn export(app: &TestApp, token: &str) -> String {
    let response = app
        .client
        .get(collection(app, "/export"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "text/csv; charset=utf-8"
    );
    response.text().await.unwrap()
}

#[tokio::test]
async fn csv_imports_of_both_layouts_list_export_and_round_trip() {
    for app in apps().await {
        let (_, token) = app.user_with_token("alice", SCOPES).await;

        // One row names no card: it is listed by line and nothing is written.
        let (status, outcome) = import(&app, &token, "", "text/csv", MOXFIELD).await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(
            outcome,
            json!({"entries": 0, "cards": 0, "version": 0, "rows": 0, "unresolved": [{
                "line": 6, "reason": "not_found",
                "text": "\"1\",\"0\",\"Lightnig Bolt\",\"m19\",\"Near Mint\",\"English\",\"\",\"\",\"\",\"\",\"False\",\"False\",\"\""
            }]})
        );
        assert!(entries(&app, &token).await.is_empty());

        let (status, outcome) =
            import(&app, &token, "?skip_unresolved=true", "text/csv", MOXFIELD).await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(
            (outcome["rows"].clone(), outcome["version"].clone()),
            (json!(4), json!(1))
        );
        assert_eq!(outcome["unresolved"].as_array().unwrap().len(), 1);

        let (status, outcome) = import(
            &app,
            &token,
            "?mode=add",
            "text/csv; charset=utf-8",
            DECKBOX,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(
            outcome["unresolved"],
            json!([]),
            "a set's name alone is no obstacle"
        );
        assert_eq!(
            (
                outcome["entries"].clone(),
                outcome["cards"].clone(),
                outcome["version"].clone()
            ),
            (json!(7), json!(17), json!(2))
        );
        let listed = entries(&app, &token).await;
        assert_eq!(
            listed,
            [
                "3 Demanding Dragon m19 135 - 0",
                "2 Dimir Spybug grn 166 - 0",
                "4 Forest m19 280 - 2",
                "1 Karn, Scion of Urza dom 1 foil 0",
                "4 Llanowar Elves dom 168 - 1",
                "1 Llanowar Elves fbb 211 foil 0",
                "2 Siege Wurm grn 144 - 0",
            ]
        );

        // Filters and pages.
        let (status, _, page) = send(
            app.client
                .get(collection(&app, "?q=ELVES&set=DOM&limit=1"))
                .bearer_auth(&token),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(page["data"][0]["name"], "Llanowar Elves");
        assert_eq!(page["pagination"]["total"], 1);
        assert_eq!(
            page["totals"],
            json!({"entries": 7, "cards": 17, "version": 2})
        );

        // The export, in Moxfield's layout, keeps condition and language, and imports back to
        // the same collection.
        let csv = export(&app, &token).await;
        assert!(csv.starts_with("\"Count\",\"Tradelist Count\",\"Name\",\"Edition\",\"Condition\",\"Language\",\"Foil\",\"Tags\",\"Last Modified\",\"Collector Number\",\"Alter\",\"Proxy\",\"Purchase Price\"\n"), "{csv}");
        assert!(
            csv.contains(
                "\"1\",\"0\",\"Llanowar Elves\",\"fbb\",\"Lightly Played\",\"German\",\"foil\""
            ),
            "{csv}"
        );
        let (_, bob) = app.user_with_token("bob", SCOPES).await;
        patch(
            &app,
            &bob,
            json!([{"quantity": 9, "name": "Island", "set": "m19"}]),
        )
        .await;
        let (status, outcome) = import(&app, &bob, "?mode=replace", "text/csv", &csv).await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(
            (outcome["rows"].clone(), outcome["entries"].clone()),
            (json!(7), json!(7))
        );
        assert_eq!(entries(&app, &bob).await, listed);
        assert_eq!(
            export(&app, &bob).await,
            csv,
            "export(import(export)) = export"
        );
    }
}

#[tokio::test]
async fn a_deck_list_imports_as_owned_copies() {
    for app in apps().await {
        let (_, token) = app.user_with_token("alice", SCOPES).await;
        let list = "Deck\n4 Llanowar Elves (DOM) 168\n2x Siege Wurm\nnot a card line at all (\n\nSideboard\n1 Demanding Dragon *F*\n";
        let (status, outcome) =
            import(&app, &token, "?skip_unresolved=true", "text/plain", list).await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(outcome["rows"], 3);
        assert_eq!(outcome["cards"], 7);
        assert_eq!(outcome["unresolved"][0]["line"], 4);
        assert_eq!(
            entries(&app, &token).await,
            [
                "1 Demanding Dragon m19 135 foil 0",
                "4 Llanowar Elves dom 168 - 0",
                "2 Siege Wurm grn 144 - 0"
            ]
        );
    }
}

#[tokio::test]
async fn patches_are_all_or_nothing_and_move_the_version() {
    for app in apps().await {
        let (_, token) = app.user_with_token("alice", SCOPES).await;
        let (status, totals) = patch(
            &app,
            &token,
            json!([{"quantity": 3, "name": "Siege Wurm"}, {"quantity": 2, "name": "siege wurm", "foil": true}]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{totals}");
        assert_eq!(totals, json!({"entries": 2, "cards": 5, "version": 1}));

        // Below zero: 400 naming the change; the good change beside it is not made either.
        let (status, body) = patch(
            &app,
            &token,
            json!([{"quantity": 1, "name": "Demanding Dragon"}, {"quantity": -3, "name": "Siege Wurm", "foil": true}]),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
        assert_eq!(details["fields"][0]["field"], "changes[1]");
        // Unresolved: 422 listing it; nothing written.
        let (status, body) = patch(
            &app,
            &token,
            json!([{"quantity": 1, "name": "Demanding Dragon"}, {"quantity": 1, "name": "Lightnig Bolt"}]),
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let details = assert_envelope(&body, "SERVICE_CARD_RESOLUTION_FAILED");
        assert_eq!(details["unresolved"][0]["index"], 1);
        assert_eq!(details["unresolved"][0]["reason"], "not_found");
        let (status, body) = patch(&app, &token, json!([])).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, body) =
            patch(&app, &token, json!([{"quantity": "two", "name": "Forest"}])).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

        let (_, _, page) = send(app.client.get(collection(&app, "")).bearer_auth(&token)).await;
        assert_eq!(
            page["totals"],
            json!({"entries": 2, "cards": 5, "version": 1}),
            "refusals change nothing"
        );

        // Down to zero removes the entry.
        let (_, totals) = patch(
            &app,
            &token,
            json!([{"quantity": -2, "name": "Siege Wurm", "foil": true}]),
        )
        .await;
        assert_eq!(totals, json!({"entries": 1, "cards": 3, "version": 2}));
    }
}

#[tokio::test]
async fn a_storm_of_concurrent_patches_loses_no_delta() {
    for app in apps().await {
        let (_, token) = app.user_with_token("alice", SCOPES).await;
        let storm = 40;
        let requests = (0..storm).map(|n| {
            let change = if n % 4 == 0 {
                json!([{"quantity": 2, "name": "Forest", "set": "m19"}, {"quantity": 1, "name": "Siege Wurm"}])
            } else {
                json!([{"quantity": 1, "name": "Siege Wurm"}])
            };
            patch(&app, &token, change)
        });
        let answers = futures_util::future::join_all(requests).await;
        let mut versions: Vec<i64> = answers
            .iter()
            .map(|(status, body)| {
                assert_eq!(*status, StatusCode::OK, "{body}");
                body["version"].as_i64().unwrap()
            })
            .collect();
        versions.sort_unstable();
        assert_eq!(
            versions,
            (1..=storm).collect::<Vec<i64>>(),
            "one version per PATCH, no gaps"
        );
        assert_eq!(
            entries(&app, &token).await,
            [
                format!(
                    "{} Forest m19 {} - 0",
                    2 * storm / 4,
                    forest_number(&app, &token).await
                ),
                format!("{storm} Siege Wurm grn 144 - 0")
            ]
        );
    }
}

/// The collector number the m19 Forest resolved to (the catalog's default printing of the set).
async fn forest_number(app: &TestApp, token: &str) -> String {
    let (_, _, page) = send(
        app.client
            .get(collection(app, "?q=forest"))
            .bearer_auth(token),
    )
    .await;
    page["data"][0]["collector_number"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn needs_tell_what_a_deck_lacks_as_json_and_as_a_shopping_list() {
    for app in apps().await {
        let (_, token) = app.user_with_token("alice", SCOPES).await;
        let (status, _, deck) = send(
            app.client.post(app.api("/games/mtg/decks")).bearer_auth(&token).json(&json!({
                "name": "Elves",
                "cards": [
                    {"section": "mainboard", "quantity": 4, "name": "Llanowar Elves", "set": "dom"},
                    {"section": "mainboard", "quantity": 2, "name": "Siege Wurm"},
                    {"section": "sideboard", "quantity": 2, "name": "Llanowar Elves", "set": "fbb", "collector_number": "211"},
                    {"section": "maybeboard", "quantity": 4, "name": "Demanding Dragon"}
                ]
            })),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{deck}");
        let id = deck["id"].as_str().unwrap();
        // Five elves of any printing and finish: four cover the mainboard, one the sideboard.
        patch(&app, &token, json!([
            {"quantity": 3, "name": "Llanowar Elves", "set": "fbb", "collector_number": "211", "foil": true},
            {"quantity": 2, "name": "Llanowar Elves", "set": "dom"}
        ]))
        .await;
        let needs_url = app.api(&format!("/games/mtg/decks/{id}/needs"));
        let (status, _, needs) = send(app.client.get(&needs_url).bearer_auth(&token)).await;
        assert_eq!(status, StatusCode::OK, "{needs}");
        assert_eq!(
            (needs["deck_id"].as_str(), needs["version"].clone()),
            (Some(id), json!(1))
        );
        assert_eq!(
            (needs["have"].clone(), needs["need"].clone()),
            (json!(5), json!(3))
        );
        let items: Vec<(String, String, u64, u64, u64)> = needs["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                (
                    item["name"].as_str().unwrap().to_owned(),
                    item["section"].as_str().unwrap().to_owned(),
                    item["quantity"].as_u64().unwrap(),
                    item["owned"].as_u64().unwrap(),
                    item["missing"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            items,
            [
                ("Llanowar Elves".into(), "mainboard".into(), 4, 4, 0),
                ("Llanowar Elves".into(), "sideboard".into(), 2, 1, 1),
                ("Siege Wurm".into(), "mainboard".into(), 2, 0, 2),
            ]
        );
        let response = app
            .client
            .get(format!("{needs_url}?text=true"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            response.text().await.unwrap(),
            "Deck\n2 Siege Wurm\n\nSideboard\n1 Llanowar Elves\n"
        );

        // Another user's private deck is not there; a public one is, against their own collection.
        let (_, bob) = app.user_with_token("bob", SCOPES).await;
        let (status, _, body) = send(app.client.get(&needs_url).bearer_auth(&bob)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
}

#[tokio::test]
async fn collection_events_reach_their_owner_alone() {
    let app = TestApp::postgres().await;
    let all = "collection:read collection:write decks:read sideboards:read";
    let (alice_id, alice) = app.user_with_token("alice", all).await;
    let (_, bob) = app.user_with_token("bob", all).await;
    let (_, no_scope) = app.user_with_token("carol", "decks:read").await;
    patch(&app, &alice, json!([{"quantity": 1, "name": "Siege Wurm"}])).await;
    let feed = |token: String| {
        let request = app
            .client
            .get(app.api("/games/mtg/events?types=collection.*"))
            .bearer_auth(token);
        async move {
            let (status, _, body) = send(request).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body["data"].as_array().unwrap().clone()
        }
    };
    let seen = feed(alice.clone()).await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["type"], "collection.updated");
    assert_eq!(
        seen[0]["subject"],
        json!({"kind": "collection", "id": alice_id})
    );
    assert_eq!(
        seen[0]["data"],
        json!({"entries": 1, "cards": 1, "version": 1})
    );
    assert!(feed(bob).await.is_empty(), "another user");
    assert!(feed(no_scope).await.is_empty(), "without collection:read");
}

/// `body` as a chunked upload of 64 KiB pieces: no `Content-Length`, so the server can only
/// count what arrives.
fn chunked(body: Vec<u8>) -> reqwest::Body {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = body
        .chunks(64 * 1024)
        .map(|chunk| Ok(chunk.to_vec()))
        .collect();
    reqwest::Body::wrap_stream(futures_util::stream::iter(chunks))
}

async fn import_body(
    app: &TestApp,
    token: &str,
    body: reqwest::Body,
    gzip: bool,
) -> (StatusCode, Value) {
    let mut request = app
        .client
        .post(collection(app, "/import?mode=replace"))
        .bearer_auth(token)
        .header("content-type", "text/csv");
    if gzip {
        request = request.header("content-encoding", "gzip");
    }
    let (status, _, body) = send(request.body(body)).await;
    (status, body)
}

#[tokio::test]
async fn a_large_csv_is_read_as_it_arrives_within_the_limit() {
    let forest = "\"1\",\"0\",\"Forest\",\"m19\",\"\",\"\",\"\",\"\",\"\",\"280\",\"False\",\"False\",\"\"\n";
    let header = MOXFIELD.lines().next().unwrap();
    let rows = |count: usize| format!("{header}\n{}", forest.repeat(count)).into_bytes();
    for app in apps().await {
        let (_, token) = app.user_with_token("alice", SCOPES).await;

        // 3.6 MiB in 58 chunks, no length given: every row is read, line numbers run on.
        let (status, outcome) = import_body(&app, &token, chunked(rows(60_000)), false).await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(
            (
                outcome["rows"].clone(),
                outcome["cards"].clone(),
                outcome["version"].clone()
            ),
            (json!(60_000), json!(60_000), json!(1))
        );

        // Over 4 MiB without a length: counted as it arrives, refused, nothing written.
        let (status, body) = import_body(&app, &token, chunked(rows(70_000)), false).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_envelope(&body, "SERVICE_PAYLOAD_TOO_LARGE");

        // A header in no layout is refused, and the client still reads the answer.
        let mut unknown = b"Qty,Card\n".to_vec();
        unknown.extend(forest.repeat(40_000).into_bytes());
        let (status, body) = import_body(&app, &token, chunked(unknown), false).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            assert_envelope(&body, "SERVICE_VALIDATION_ERROR")["fields"][0]["code"],
            "layout"
        );

        // A body that is not UTF-8 is refused whole.
        let mut latin1 = rows(2);
        latin1.extend_from_slice(b"\"1\",\"0\",\"For\xeat\",\"m19\",\"\",\"\",\"\",\"\",\"\",\"280\",\"False\",\"False\",\"\"\n");
        let (status, body) = import_body(&app, &token, chunked(latin1), false).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            assert_envelope(&body, "SERVICE_VALIDATION_ERROR")["fields"][0]["code"],
            "encoding"
        );

        // A gzip-encoded upload is decoded as it arrives; the limit counts decoded bytes.
        let gzip = |body: Vec<u8>| {
            use std::io::Write as _;
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(&body).unwrap();
            encoder.finish().unwrap()
        };
        let (status, outcome) = import_body(&app, &token, gzip(rows(3)).into(), true).await;
        assert_eq!(status, StatusCode::OK, "{outcome}");
        assert_eq!(outcome["cards"], json!(3));
        let (status, body) = import_body(&app, &token, gzip(rows(70_000)).into(), true).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

        let (_, _, page) = send(app.client.get(collection(&app, "")).bearer_auth(&token)).await;
        assert_eq!(
            page["totals"],
            json!({"entries": 1, "cards": 3, "version": 2}),
            "only the two good imports wrote"
        );
    }
}

#[tokio::test]
async fn every_refusal_answers_the_envelope() {
    let app = TestApp::memory().await;
    let (_, token) = app.user_with_token("alice", SCOPES).await;
    let (_, reader) = app
        .user_with_token("rita", "collection:read decks:read")
        .await;
    let (_, decks_only) = app.user_with_token("dave", "decks:read").await;

    // Anonymous: 401 on every collection endpoint.
    for request in [
        app.client.get(collection(&app, "")),
        app.client.get(collection(&app, "/export")),
        app.client
            .patch(collection(&app, ""))
            .json(&json!({"changes": []})),
        app.client
            .post(collection(&app, "/import"))
            .header("content-type", "text/csv")
            .body(MOXFIELD),
    ] {
        let (status, _, body) = send(request).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");
    }

    // A partner alone has no collection: 401, even with every scope.
    let key = app.partner_with_key("acme", "alice", SCOPES).await;
    let (status, _, body) = send(
        app.client
            .get(collection(&app, ""))
            .header("x-api-key", &key),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");

    // Scopes: writes need collection:write; needs name both scopes.
    let (status, body) = patch(&app, &reader, json!([{"quantity": 1, "name": "Forest"}])).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let details = assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE");
    assert_eq!(details["required"], json!(["collection:write"]));
    let (status, _, body) = send(
        app.client
            .get(collection(&app, ""))
            .bearer_auth(&decks_only),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _, body) = send(
        app.client
            .get(app.api("/games/mtg/decks/00000000-0000-7000-8000-000000000000/needs"))
            .bearer_auth(&decks_only),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "the scope check comes before any lookup: {body}"
    );
    let details = assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE");
    assert_eq!(
        details["required"],
        json!(["collection:read", "decks:read"])
    );
    assert_eq!(details["granted"], json!(["decks:read"]));
    let (status, _, body) = send(
        app.client
            .get(app.api("/games/mtg/decks/00000000-0000-7000-8000-000000000000/needs"))
            .bearer_auth(&reader),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // Imports: an unknown layout, another content type, a bad mode, a body over 4 MiB.
    let (status, body) = import(&app, &token, "", "text/csv", "Qty,Card\n1,Forest\n").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    assert_eq!(details["fields"][0]["field"], "body");
    let (status, body) = import(&app, &token, "", "application/json", "{}").await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    let (status, body) = import(&app, &token, "?mode=merge", "text/csv", MOXFIELD).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    assert_eq!(details["fields"][0]["field"], "mode");
    let huge = format!("{}{}", MOXFIELD, "\"1\",\"0\",\"Forest\",\"m19\",\"\",\"\",\"\",\"\",\"\",\"280\",\"False\",\"False\",\"\"\n".repeat(70_000));
    let (status, body) = import(&app, &token, "", "text/csv", &huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_envelope(&body, "SERVICE_PAYLOAD_TOO_LARGE");

    // An unknown game.
    let (status, _, body) = send(
        app.client
            .get(app.api("/games/nope/collection"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, _, page) = send(app.client.get(collection(&app, "")).bearer_auth(&token)).await;
    assert_eq!(
        page["totals"],
        json!({"entries": 0, "cards": 0, "version": 0}),
        "nothing was written"
    );
}
