//! Decks over HTTP: create, read, list, PATCH, history, rollback and views, each rule with the
//! requests it must refuse.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const ALL_DECK_SCOPES: &str = "decks:read decks:write";

fn decks_url(app: &TestApp) -> String {
    app.api("/games/mtg/decks")
}

fn deck_url(app: &TestApp, id: &str) -> String {
    app.api(&format!("/games/mtg/decks/{id}"))
}

/// Creates a deck and returns its write record.
async fn create(app: &TestApp, token: &str, body: Value) -> Value {
    let (status, headers, record) = send(
        app.client
            .post(decks_url(app))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    assert_eq!(headers["etag"], "\"1\"");
    record
}

fn commander_deck() -> Value {
    json!({
        "name": "Chromium Control",
        "visibility": ["Public"],
        "notes": "Draw, then win.",
        "legal": true,
        "archetype": "Control",
        "youtube_url": "https://youtu.be/abc",
        "cards": [
            {"section": "commander", "quantity": 1, "name": "chromium, the mutable"},
            {"section": "mainboard", "quantity": 2, "name": "Dimir Spybug"},
            {"section": "mainboard", "quantity": 30, "name": "Island", "set": "dom"},
            {"section": "mainboard", "quantity": 2, "name": "Dimir Spybug"},
            {"section": "sideboard", "quantity": 1, "name": "Siege Wurm", "foil": true},
            {"section": "maybeboard", "quantity": 4, "name": "Truefire Captain"}
        ]
    })
}

#[tokio::test]
async fn a_created_deck_reads_back_with_cards_summary_and_featured_cards() {
    let app = TestApp::memory().await;
    let (user_id, token) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let record = create(&app, &token, commander_deck()).await;
    assert_eq!(record["name"], "Chromium Control");
    assert_eq!(record["visibility"], json!(["public"]));
    assert_eq!(
        (record["version"].clone(), record["pageviews"].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(record["source_provider"], "manual");
    assert!(record["source_imported_at"].is_null());
    let id = record["id"].as_str().unwrap();

    let (status, headers, detail) = send(
        app.client
            .get(format!("{}?expand=cards", deck_url(&app, id))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(headers["etag"], "\"1\"");
    assert_eq!(
        detail["author"],
        json!({"id": user_id, "username": "alice"})
    );
    assert_eq!(detail["hasVideo"], true);
    assert_eq!(detail["notes"], "Draw, then win.");
    assert_eq!(detail["featured_cards"][0]["slot"], "commander");
    assert_eq!(detail["featured_cards"][0]["slotKey"], "commander:0");
    assert_eq!(detail["featured_cards"][0]["label"], "Commander");
    assert_eq!(detail["featured_cards"][0]["name"], "Chromium, the Mutable");
    let sections: Vec<(&str, u64)> = detail["expanded_cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|section| {
            (
                section["section"].as_str().unwrap(),
                section["count"].as_u64().unwrap(),
            )
        })
        .collect();
    // Game order; the two Spybug lines merged into one of 4.
    assert_eq!(
        sections,
        [
            ("commander", 1),
            ("mainboard", 34),
            ("sideboard", 1),
            ("maybeboard", 4)
        ]
    );
    let mainboard = &detail["expanded_cards"][1]["cards"];
    assert_eq!(mainboard[0]["name"], "Dimir Spybug");
    assert_eq!(mainboard[0]["quantity"], 4);
    assert_eq!(mainboard[1]["set"], "dom");
    assert_eq!(detail["expanded_cards"][2]["cards"][0]["foil"], true);
    assert!(
        detail.get("section_counts").is_none(),
        "summary fields only on lists"
    );

    let (status, _, list) = send(
        app.client
            .get(format!("{}?include=summary", decks_url(&app))),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let item = &list["data"][0];
    assert_eq!(
        item["section_counts"],
        json!({"commander": 1, "mainboard": 34, "maybeboard": 4, "sideboard": 1})
    );
    // Colours of counted sections only, in W U B R G order (the maybeboard's red is left out).
    assert_eq!(item["colors"], json!(["W", "U", "B", "G"]));
    assert!(item.get("expanded_cards").is_none());
    let (_, _, plain) = send(app.client.get(decks_url(&app))).await;
    assert!(plain["data"][0].get("colors").is_none());
}

#[tokio::test]
async fn writes_need_credentials_and_the_write_scope() {
    let app = TestApp::memory().await;
    let (_, reader) = app.user_with_token("reader", "decks:read").await;
    let (status, _, body) =
        send(app.client.post(decks_url(&app)).json(&json!({"name": "x"}))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");
    let (status, _, body) = send(
        app.client
            .post(decks_url(&app))
            .bearer_auth(&reader)
            .json(&json!({"name": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE")["required"],
        json!(["decks:write"])
    );
}

#[tokio::test]
async fn a_write_only_token_cannot_read_decks() {
    let app = TestApp::memory().await;
    let (_, writer) = app.user_with_token("writer", "decks:write").await;
    let record = create(
        &app,
        &writer,
        json!({"name": "Mine", "visibility": ["public"]}),
    )
    .await;
    let id = record["id"].as_str().unwrap();
    for url in [
        decks_url(&app),
        deck_url(&app, id),
        format!("{}/versions", deck_url(&app, id)),
    ] {
        let (status, _, body) = send(app.client.get(&url).bearer_auth(&writer)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{url}");
        let details = assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE");
        assert_eq!(
            details,
            json!({"required": ["decks:read"], "granted": ["decks:write"]})
        );
    }
}

#[tokio::test]
async fn a_partner_outside_its_game_scopes_gets_403() {
    let app = TestApp::memory().await;
    app.user_with_token("owner", "decks:read").await;
    app.admin(&[
        "partner",
        "create",
        "--slug",
        "lorcana-only",
        "--owner",
        "owner",
        "--scopes",
        "decks:read",
        "--game-scopes",
        "lorcana",
    ])
    .await
    .unwrap();
    let key = app
        .admin(&["api-key", "create", "--partner", "lorcana-only"])
        .await
        .unwrap();
    let (status, _, body) = send(
        app.client
            .get(decks_url(&app))
            .header("x-api-key", key["key"].as_str().unwrap()),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE")["required"],
        json!(["game:mtg"])
    );
    let (status, _, _) = send(
        app.client
            .get(app.api("/games/lorcana/decks"))
            .header("x-api-key", key["key"].as_str().unwrap()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn invalid_deck_bodies_are_refused_with_field_details_and_change_nothing() {
    let app = TestApp::memory().await;
    let (_, token) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let post = |body: Value| {
        app.client
            .post(decks_url(&app))
            .bearer_auth(&token)
            .json(&body)
    };

    let (status, _, body) = send(post(json!({
        "name": "n".repeat(256),
        "notes": "x".repeat(50_001),
        "youtube_url": "y".repeat(501),
        "thumbnail": "t".repeat(256),
        "source_external_id": "i".repeat(129),
        "source_external_version": "v".repeat(33),
        "source_provider": "nowhere",
        "visibility": ["public", "private"],
    })))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    let fields: Vec<String> = details["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|field| field["field"].as_str().unwrap().to_owned())
        .collect();
    for field in [
        "name",
        "notes",
        "youtube_url",
        "thumbnail",
        "source_external_id",
        "source_external_version",
        "source_provider",
        "visibility",
    ] {
        assert!(
            fields.iter().any(|found| found == field),
            "{field} in {fields:?}"
        );
    }

    let cases = [
        (json!({}), "name"),
        (json!({"name": "x", "colour": "red"}), "colour"),
        (json!({"name": "x", "format": "not-a-uuid"}), "format"),
        (
            json!({"name": "x", "format": "00000000-0000-0000-0000-000000000000"}),
            "format",
        ),
        (json!({"name": "x", "is_archived": true}), "is_archived"),
        (
            json!({"name": "x", "cards": [{"section": "graveyard", "quantity": 1, "name": "Island"}]}),
            "cards[0].section",
        ),
        (
            json!({"name": "x", "cards": [{"section": "mainboard", "quantity": 0, "name": "Island"}]}),
            "cards[0].quantity",
        ),
        (
            json!({"name": "x", "cards": [{"section": "mainboard", "quantity": 600, "name": "Island"}, {"section": "mainboard", "quantity": 600, "name": "Island"}]}),
            "cards",
        ),
    ];
    for (request, field) in cases {
        let (status, _, body) = send(post(request.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{request}: {body}");
        assert_eq!(
            assert_envelope(&body, "SERVICE_VALIDATION_ERROR")["fields"][0]["field"],
            field,
            "{request}"
        );
    }

    let (status, _, body) = send(post(json!({"name": "x", "cards": [
        {"section": "mainboard", "quantity": 4, "name": "Lightnig Bolt"},
        {"section": "mainboard", "quantity": 4, "name": "Island"}
    ]})))
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let details = assert_envelope(&body, "SERVICE_CARD_RESOLUTION_FAILED");
    assert_eq!(details["unresolved"][0]["index"], 0);
    assert_eq!(details["unresolved"][0]["reason"], "not_found");
    assert_eq!(details["unresolved"].as_array().unwrap().len(), 1);

    let (_, _, list) = send(app.client.get(decks_url(&app)).bearer_auth(&token)).await;
    assert_eq!(list["pagination"]["total"], 0, "nothing was created");
}

#[tokio::test]
async fn the_provenance_triple_is_unique_per_owner() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    let imported = json!({"name": "Imported", "source_provider": "moxfield", "source_external_id": "abc", "source_external_version": "3"});
    let record = create(&app, &alice, imported.clone()).await;
    assert!(record["source_imported_at"].is_string());
    let (status, _, body) = send(
        app.client
            .post(decks_url(&app))
            .bearer_auth(&alice)
            .json(&imported),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let details = assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    assert_eq!(details["fields"][0]["code"], "duplicate");
    create(&app, &bob, imported).await;
}

#[tokio::test]
async fn hidden_decks_are_404_for_everyone_but_their_owner() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    for level in ["private", "unlisted"] {
        let record = create(&app, &alice, json!({"name": level, "visibility": [level]})).await;
        let id = record["id"].as_str().unwrap();
        let reads = [
            deck_url(&app, id),
            format!("{}/versions", deck_url(&app, id)),
        ];
        for url in &reads {
            let (status, _, _) = send(app.client.get(url).bearer_auth(&alice)).await;
            assert_eq!(status, StatusCode::OK, "owner reads {url}");
            for request in [app.client.get(url), app.client.get(url).bearer_auth(&bob)] {
                let (status, _, body) = send(request).await;
                assert_eq!(status, StatusCode::NOT_FOUND, "{url}");
                assert_envelope(&body, "SERVICE_NOT_FOUND");
            }
        }
        let (status, _, _) = send(app.client.post(format!("{}/views", deck_url(&app, id)))).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    // A deck of another game is not found under this one, nor an unknown game or a bad id.
    let record = create(
        &app,
        &alice,
        json!({"name": "public", "visibility": ["public"]}),
    )
    .await;
    let id = record["id"].as_str().unwrap();
    for url in [
        app.api(&format!("/games/lorcana/decks/{id}")),
        app.api(&format!("/games/nope/decks/{id}")),
        deck_url(&app, "not-a-uuid"),
    ] {
        let (status, _, body) = send(app.client.get(&url)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{url}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
}

#[tokio::test]
async fn lists_show_public_decks_to_all_and_own_ones_to_their_owner_never_archived_ones() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    for (name, level) in [
        ("a-public", "public"),
        ("a-private", "private"),
        ("a-unlisted", "unlisted"),
    ] {
        create(&app, &alice, json!({"name": name, "visibility": [level]})).await;
    }
    let archived = create(
        &app,
        &bob,
        json!({"name": "b-archived", "visibility": ["public"]}),
    )
    .await;
    let id = archived["id"].as_str().unwrap();
    let (status, _, _) = send(
        app.client
            .patch(deck_url(&app, id))
            .bearer_auth(&bob)
            .json(&json!({"is_archived": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let names = |list: &Value| -> Vec<String> {
        let mut names: Vec<String> = list["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let (_, _, anonymous) = send(app.client.get(decks_url(&app))).await;
    assert_eq!(names(&anonymous), ["a-public"]);
    let (_, _, as_alice) = send(app.client.get(decks_url(&app)).bearer_auth(&alice)).await;
    assert_eq!(names(&as_alice), ["a-private", "a-public", "a-unlisted"]);
    let (_, _, as_bob) = send(app.client.get(decks_url(&app)).bearer_auth(&bob)).await;
    assert_eq!(names(&as_bob), ["a-public"]);
    // Archived decks leave lists but stay readable by id.
    let (status, _, detail) = send(app.client.get(deck_url(&app, id))).await;
    assert_eq!(
        (status, detail["name"].clone()),
        (StatusCode::OK, json!("b-archived"))
    );
}

#[tokio::test]
async fn lists_filter_sort_and_paginate_with_links() {
    let app = TestApp::memory().await;
    let (alice_id, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    for (token, name, legal) in [
        (&alice, "Burn One", true),
        (&alice, "Control", false),
        (&bob, "burn two", true),
    ] {
        create(
            &app,
            token,
            json!({"name": name, "visibility": ["public"], "legal": legal}),
        )
        .await;
    }
    let get = |query: &str| app.client.get(format!("{}?{query}", decks_url(&app)));
    let names = |list: &Value| -> Vec<String> {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect()
    };

    let (_, _, burn) = send(get("q=BURN&sort=createdAt&order=asc")).await;
    assert_eq!(names(&burn), ["Burn One", "burn two"]);
    let (_, _, mine) = send(get(&format!("authorId={alice_id}&isLegal=true"))).await;
    assert_eq!(names(&mine), ["Burn One"]);
    let (_, _, newest) = send(get("sort=editedAt")).await;
    assert_eq!(names(&newest), ["burn two", "Control", "Burn One"]);

    let (status, _, page) = send(get("limit=2&sort=createdAt&order=asc")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&page), ["Burn One", "Control"]);
    let pagination = &page["pagination"];
    assert_eq!(
        (
            pagination["total"].clone(),
            pagination["total_pages"].clone(),
            pagination["total_exact"].clone()
        ),
        (json!(3), json!(2), json!(true))
    );
    let next = pagination["next"].as_str().unwrap();
    assert!(
        next.starts_with(&app.base_url) && next.ends_with("page=2"),
        "{next}"
    );
    assert!(pagination["previous"].is_null());
    let (_, _, second) = send(app.client.get(next)).await;
    assert_eq!(names(&second), ["burn two"]);
    assert!(second["pagination"]["next"].is_null());
    let (status, _, past) = send(get("page=9")).await;
    assert_eq!((status, past["data"].clone()), (StatusCode::OK, json!([])));

    for bad in [
        "limit=101",
        "limit=0",
        "page=0",
        "page=101&limit=100",
        "sort=name",
        "order=up",
        "include=all",
        "createdAfter=yesterday",
        "authorId=bob",
        "hasGuide=maybe",
    ] {
        let (status, _, body) = send(get(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    }
    let (status, _, _) = send(get(
        "createdAfter=2026-01-01T00:00:00%2B02:00&unknownParameter=1",
    ))
    .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "any RFC 3339 offset; unknown parameters are ignored"
    );
}

#[tokio::test]
async fn patches_are_owner_only_versioned_and_guarded_by_if_match() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    let record = create(
        &app,
        &alice,
        json!({"name": "First", "visibility": ["public"], "youtube_url": "https://youtu.be/a"}),
    )
    .await;
    let id = record["id"].as_str().unwrap();
    let patch = |token: &str, body: Value| {
        app.client
            .patch(deck_url(&app, id))
            .bearer_auth(token)
            .json(&body)
    };

    let (status, _, body) = send(patch(&bob, json!({"name": "Stolen"}))).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a non-owner write is a 404, even on a public deck"
    );
    assert_envelope(&body, "SERVICE_NOT_FOUND");

    let (status, headers, record) = send(patch(
        &alice,
        json!({"name": "Second", "youtube_url": null}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{record}");
    assert_eq!(
        (record["version"].clone(), record["name"].clone()),
        (json!(2), json!("Second"))
    );
    assert!(record["youtube_url"].is_null(), "null clears a field");
    assert_eq!(headers["etag"], "\"2\"");

    let (status, _, body) =
        send(patch(&alice, json!({"name": "Third"})).header("if-match", "\"1\"")).await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(
        assert_envelope(&body, "SERVICE_PRECONDITION_FAILED")["current_version"],
        2
    );
    let (status, _, record) =
        send(patch(&alice, json!({"name": "Third"})).header("if-match", "\"2\"")).await;
    assert_eq!(
        (status, record["version"].clone()),
        (StatusCode::OK, json!(3))
    );

    let (status, _, body) = send(patch(&alice, json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    let (status, _, _) = send(patch(&alice, json!({"name": ""}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (_, _, versions) = send(app.client.get(format!("{}/versions", deck_url(&app, id)))).await;
    let history: Vec<(i64, &str, &str)> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version_number"].as_i64().unwrap(),
                v["history_type"].as_str().unwrap(),
                v["name_at_version"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        history,
        [
            (1, "create", "First"),
            (2, "update", "Second"),
            (3, "update", "Third")
        ]
    );
}

#[tokio::test]
async fn rollback_restores_a_version_as_a_new_one() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    let record = create(&app, &alice, json!({"name": "Original", "visibility": ["public"], "cards": [{"section": "mainboard", "quantity": 4, "name": "Siege Wurm"}]})).await;
    let id = record["id"].as_str().unwrap();
    let (status, _, _) = send(app.client.patch(deck_url(&app, id)).bearer_auth(&alice).json(&json!({
        "name": "Changed", "visibility": ["private"], "cards": [{"section": "mainboard", "quantity": 1, "name": "Island"}]
    })))
    .await;
    assert_eq!(status, StatusCode::OK);
    let rollback = |token: &str, body: Value| {
        app.client
            .post(format!("{}/rollback", deck_url(&app, id)))
            .bearer_auth(token)
            .json(&body)
    };

    for number in [0, 3, 99_999_999_999i64] {
        let (status, _, body) = send(rollback(&alice, json!({"version_number": number}))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{number}");
        assert_envelope(&body, "SERVICE_NOT_FOUND");
    }
    let (status, _, _) = send(rollback(&alice, json!({"version_number": "one"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = send(rollback(&bob, json!({"version_number": 1}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, headers, record) = send(rollback(&alice, json!({"version_number": 1}))).await;
    assert_eq!(status, StatusCode::OK, "{record}");
    assert_eq!(headers["etag"], "\"3\"");
    assert_eq!(
        (
            record["name"].clone(),
            record["visibility"].clone(),
            record["version"].clone()
        ),
        (json!("Original"), json!(["public"]), json!(3))
    );
    let (_, _, detail) = send(
        app.client
            .get(format!("{}?expand=cards", deck_url(&app, id))),
    )
    .await;
    assert_eq!(
        detail["expanded_cards"][0]["cards"][0]["name"],
        "Siege Wurm"
    );
    let (_, _, versions) = send(app.client.get(format!("{}/versions", deck_url(&app, id)))).await;
    assert_eq!(versions[2]["history_type"], "rollback");
    assert_eq!(versions[2]["restored_from"], 1);
    assert!(versions[1].get("restored_from").is_none());
}

#[tokio::test]
async fn a_view_counts_once_per_visitor_per_hour() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let (_, bob) = app.user_with_token("bob", ALL_DECK_SCOPES).await;
    let record = create(
        &app,
        &alice,
        json!({"name": "Viewed", "visibility": ["public"]}),
    )
    .await;
    let views = format!("{}/views", deck_url(&app, record["id"].as_str().unwrap()));
    let view = |token: Option<&str>| {
        let request = app.client.post(&views);
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    };
    assert_eq!(
        send(view(Some(&bob))).await.2,
        json!({"pageviews": 1, "incremented": true})
    );
    assert_eq!(
        send(view(Some(&bob))).await.2,
        json!({"pageviews": 1, "incremented": false})
    );
    assert_eq!(
        send(view(None)).await.2,
        json!({"pageviews": 2, "incremented": true})
    );
    assert_eq!(
        send(view(None)).await.2,
        json!({"pageviews": 2, "incremented": false}),
        "same IP"
    );
    assert_eq!(
        send(view(Some(&alice))).await.2,
        json!({"pageviews": 3, "incremented": true})
    );
    let (_, _, list) = send(app.client.get(format!("{}?sort=views", decks_url(&app)))).await;
    assert_eq!(list["data"][0]["views"], 3);
}

#[tokio::test]
async fn form_and_multipart_bodies_create_the_same_deck() {
    let app = TestApp::memory().await;
    let (_, token) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let cards = r#"[{"section":"mainboard","quantity":2,"name":"Island"}]"#;
    let form = app.client.post(decks_url(&app)).bearer_auth(&token).form(&[
        ("name", "Form Deck"),
        ("visibility", "public"),
        ("legal", "true"),
        ("cards", cards),
    ]);
    let (status, _, record) = send(form).await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    assert_eq!(
        (record["name"].clone(), record["legal"].clone()),
        (json!("Form Deck"), json!(true))
    );

    let multipart = reqwest::multipart::Form::new()
        .text("name", "Multipart Deck")
        .text("visibility", "public")
        .text("cards", cards);
    let (status, _, record) = send(
        app.client
            .post(decks_url(&app))
            .bearer_auth(&token)
            .multipart(multipart),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    let (_, _, detail) = send(app.client.get(format!(
        "{}?expand=cards",
        deck_url(&app, record["id"].as_str().unwrap())
    )))
    .await;
    assert_eq!(detail["expanded_cards"][0]["count"], 2);

    let (status, _, body) = send(
        app.client
            .post(decks_url(&app))
            .bearer_auth(&token)
            .header("content-type", "text/plain")
            .body("name=x"),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
}

#[tokio::test]
async fn concurrent_patches_on_postgres_lose_nothing() {
    let app = TestApp::postgres().await;
    let (_, token) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let record = create(
        &app,
        &token,
        json!({"name": "Contended", "visibility": ["public"]}),
    )
    .await;
    let url = deck_url(&app, record["id"].as_str().unwrap());
    let patches = (0..20).map(|n| {
        let request = app
            .client
            .patch(&url)
            .bearer_auth(&token)
            .json(&json!({"notes": format!("edit {n}")}));
        async move { request.send().await.unwrap().status() }
    });
    let statuses = futures_util::future::join_all(patches).await;
    assert!(
        statuses.iter().all(|status| *status == StatusCode::OK),
        "{statuses:?}"
    );
    let (_, _, versions) = send(app.client.get(format!("{url}/versions"))).await;
    let numbers: Vec<i64> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version_number"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, (1..=21).collect::<Vec<_>>());
    let (_, headers, _) = send(app.client.get(&url)).await;
    assert_eq!(headers["etag"], "\"21\"");
}

#[tokio::test]
async fn concurrent_first_views_by_one_visitor_count_once_on_postgres() {
    let app = TestApp::postgres().await;
    let (_, token) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let record = create(
        &app,
        &token,
        json!({"name": "Popular", "visibility": ["public"]}),
    )
    .await;
    let url = format!("{}/views", deck_url(&app, record["id"].as_str().unwrap()));
    let views = (0..20).map(|_| {
        let request = app.client.post(&url).bearer_auth(&token);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    });
    let answers = futures_util::future::join_all(views).await;
    let counted = answers
        .iter()
        .filter(|answer| answer["incremented"] == true)
        .count();
    assert_eq!(counted, 1, "{answers:?}");
    let (_, _, detail) = send(
        app.client
            .get(deck_url(&app, record["id"].as_str().unwrap())),
    )
    .await;
    assert_eq!(detail["views"], 1);
}

#[tokio::test]
async fn chosen_featured_cards_replace_the_derived_ones_until_reset_with_null() {
    let app = TestApp::memory().await;
    let (_, token) = app.user_with_token("alice", ALL_DECK_SCOPES).await;
    let mut body = commander_deck();
    body["featured"] = json!([
        {"slot": "cover", "name": "Siege Wurm", "foil": true},
        {"slot": "cover", "name": "Dimir Spybug"},
        {"slot": "commander", "name": "Chromium, the Mutable"}
    ]);
    let record = create(&app, &token, body).await;
    let url = deck_url(&app, record["id"].as_str().unwrap());
    let featured = |detail: &Value| -> Vec<(String, String, String, u64, bool)> {
        detail["featured_cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|card| {
                (
                    card["slotKey"].as_str().unwrap().to_owned(),
                    card["label"].as_str().unwrap().to_owned(),
                    card["name"].as_str().unwrap().to_owned(),
                    card["sortOrder"].as_u64().unwrap(),
                    card["foil"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    let (_, _, detail) = send(app.client.get(&url)).await;
    assert_eq!(
        featured(&detail),
        [
            (
                "cover:0".to_owned(),
                "Cover".to_owned(),
                "Siege Wurm".to_owned(),
                0,
                true
            ),
            (
                "cover:1".to_owned(),
                "Cover".to_owned(),
                "Dimir Spybug".to_owned(),
                1,
                false
            ),
            (
                "commander:0".to_owned(),
                "Commander".to_owned(),
                "Chromium, the Mutable".to_owned(),
                2,
                false
            ),
        ]
    );

    let (status, _, _) = send(
        app.client
            .patch(&url)
            .bearer_auth(&token)
            .json(&json!({"featured": null})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, _, detail) = send(app.client.get(&url)).await;
    assert_eq!(
        featured(&detail),
        [(
            "commander:0".to_owned(),
            "Commander".to_owned(),
            "Chromium, the Mutable".to_owned(),
            0,
            false
        )],
        "back to the commander section's cards"
    );

    let (status, _, body) = send(
        app.client
            .patch(&url)
            .bearer_auth(&token)
            .json(&json!({"featured": [{"slot": "banner", "name": "Island"}]})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _, body) = send(
        app.client
            .patch(&url)
            .bearer_auth(&token)
            .json(&json!({"featured": [{"slot": "cover", "name": "No Such Card"}]})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        assert_envelope(&body, "SERVICE_CARD_RESOLUTION_FAILED")["field"],
        "featured"
    );
}
