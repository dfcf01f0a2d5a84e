//! Sideboard guides over HTTP, on both stores: create, attach, PATCH, list, detail, detach and
//! matchups as a new user would use them, each rule with the requests it must refuse, and the
//! deck's `hasSideboardGuide` following attach, detach, archive and unarchive.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const EVERY_SCOPE: &str = "decks:read decks:write sideboards:read sideboards:write";

fn guides_url(app: &TestApp) -> String {
    app.api("/games/mtg/sideboard-guides")
}

fn guide_url(app: &TestApp, id: &str) -> String {
    app.api(&format!("/games/mtg/sideboard-guides/{id}"))
}

/// Creates a deck of `visibility` and returns its id.
async fn deck(app: &TestApp, token: &str, name: &str, visibility: &str) -> String {
    let (status, _, record) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(token)
            .json(&json!({"name": name, "visibility": [visibility]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    record["id"].as_str().unwrap().to_owned()
}

/// Creates a guide and returns its detail.
async fn create(app: &TestApp, token: &str, body: Value) -> Value {
    let (status, _, detail) = send(
        app.client
            .post(guides_url(app))
            .bearer_auth(token)
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{detail}");
    detail
}

async fn get(app: &TestApp, token: &str, url: &str) -> (StatusCode, Value) {
    let (status, _, body) = send(app.client.get(url).bearer_auth(token)).await;
    (status, body)
}

/// The deck's `hasSideboardGuide` on its detail, and whether the deck list's filter agrees.
async fn has_sideboard_guide(app: &TestApp, token: &str, deck: &str) -> bool {
    let (status, detail) = get(app, token, &app.api(&format!("/games/mtg/decks/{deck}"))).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    let flag = detail["hasSideboardGuide"].as_bool().unwrap();
    for wanted in [true, false] {
        let url = app.api(&format!(
            "/games/mtg/decks?hasSideboardGuide={wanted}&limit=100"
        ));
        let (_, list) = get(app, token, &url).await;
        let listed = list["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["id"] == deck);
        assert_eq!(
            listed,
            flag == wanted,
            "the list filter agrees with the detail"
        );
    }
    flag
}

fn names(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

fn fields(body: &Value) -> Vec<String> {
    assert_envelope(body, "SERVICE_VALIDATION_ERROR")["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|field| field["field"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_guide_is_created_attached_patched_listed_and_detached(app: TestApp) {
    let (alice_id, alice) = app.user_with_token("alice", EVERY_SCOPE).await;
    let (_, bob) = app.user_with_token("bob", EVERY_SCOPE).await;
    let primary = deck(&app, &alice, "Izzet Phoenix", "public").await;
    let private = deck(&app, &alice, "Secret tech", "private").await;
    let bobs_public = deck(&app, &bob, "Bob's Burn", "public").await;
    let bobs_private = deck(&app, &bob, "Bob's draft", "private").await;
    assert!(!has_sideboard_guide(&app, &alice, &primary).await);

    let created = create(
        &app,
        &alice,
        json!({
            "name": "Phoenix sideboard plan",
            "deck_id": primary,
            "visibility": ["Public"],
            "description": "Every matchup, in and out.",
            "tags": ["modern", "tempo"],
            "format": "Modern",
            "youtube_url": "https://youtu.be/phx",
            "matchups": [
                {"opponent_deck_name": "Tron", "opponent_archetype": "Big Mana", "sort_order": 2,
                 "difficulty": "HARD",
                 "special_card_overrides": [
                     {"special_card_type": "in", "card_id": "c-1", "card_name": "Alpine Moon"},
                     {"special_card_type": "out", "card_id": "c-2", "card_name": "Opt", "quantity": 2}]},
                {"opponent_deck_name": "Burn", "opponent_archetype": "Aggro", "sort_order": 1,
                 "difficulty": "VERY_EASY"}
            ]
        }),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let url = guide_url(&app, &id);
    assert_eq!(
        created["author"],
        json!({"id": alice_id, "username": "alice"})
    );
    assert_eq!(created["deck_id"], primary.as_str());
    assert_eq!(created["visibility"], json!(["public"]));
    assert_eq!(created["hasMatchups"], true);
    assert_eq!(created["sourceProvider"], "manual");
    assert_eq!(created["premium"], false);
    assert_eq!(created["is_archived"], false);
    let opponents: Vec<&str> = created["matchups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["opponent_deck_name"].as_str().unwrap())
        .collect();
    assert_eq!(opponents, ["Burn", "Tron"], "by sort_order");
    let tron = &created["matchups"][1];
    assert_eq!(tron["difficulty"], "HARD");
    assert_eq!(
        tron["special_card_overrides"],
        json!([
            {"special_card_type": "in", "card_id": "c-1", "card_name": "Alpine Moon", "sort_order": 0, "quantity": 1},
            {"special_card_type": "out", "card_id": "c-2", "card_name": "Opt", "sort_order": 1, "quantity": 2}
        ])
    );
    assert_eq!(
        created["decks"],
        json!([{"id": primary, "name": "Izzet Phoenix"}])
    );
    assert!(has_sideboard_guide(&app, &alice, &primary).await);

    // Attach: the owner's private deck, bob's public deck; bob's private deck is unknown.
    let attach = |deck: &str| {
        app.client
            .post(format!("{url}/decks"))
            .bearer_auth(&alice)
            .json(&json!({"deck_id": deck}))
    };
    for deck in [&private, &bobs_public, &bobs_public] {
        let response = attach(deck).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert!(response.text().await.unwrap().is_empty());
    }
    let (status, _, body) = send(attach(&bobs_private)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["deck_id"]);
    assert!(has_sideboard_guide(&app, &bob, &bobs_public).await);
    assert!(!has_sideboard_guide(&app, &bob, &bobs_private).await);

    // Deck membership: primary first; bob does not see alice's private deck.
    let (status, detail) = get(&app, &alice, &url).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        detail["attached_deck_ids"],
        json!([primary, private, bobs_public])
    );
    let (status, as_bob) = get(&app, &bob, &url).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(as_bob["attached_deck_ids"], json!([primary, bobs_public]));
    assert_eq!(
        as_bob["decks"],
        json!([{"id": primary, "name": "Izzet Phoenix"}, {"id": bobs_public, "name": "Bob's Burn"}])
    );

    // PATCH: every bound at once, nothing changed; then a good one.
    let patch = |body: Value| app.client.patch(&url).bearer_auth(&alice).json(&body);
    let (status, _, body) = send(patch(json!({
        "name": "",
        "description": "d".repeat(500_001),
        "notes": "n".repeat(500_001),
        "visibility": [""],
        "tags": ["", "t".repeat(51)],
        "format": "f".repeat(51),
        "thumbnail": "t".repeat(256),
        "youtube_url": "y".repeat(501)
    })))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        fields(&body),
        [
            "name",
            "description",
            "notes",
            "visibility",
            "tags[0]",
            "tags[1]",
            "format",
            "thumbnail",
            "youtube_url"
        ]
    );
    let (status, _, body) = send(patch(json!({"tags": vec!["x"; 51].iter().enumerate().map(|(n, _)| n.to_string()).collect::<Vec<_>>()}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["tags"]);
    let (status, _, body) = send(patch(json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["body"]);
    let (status, _, body) = send(patch(json!({"deck_id": private, "matchups": []}))).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "the primary deck and matchups have their own endpoints"
    );
    assert_eq!(fields(&body), ["deck_id", "matchups"]);
    let (status, _, body) = send(patch(json!({"premium": "yes"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["premium"]);
    let (_, unchanged) = get(&app, &alice, &url).await;
    assert_eq!(unchanged["name"], "Phoenix sideboard plan");
    let (status, _, patched) = send(patch(json!({
        "name": "Phoenix plan", "notes": "Side in Moon.", "thumbnail": "https://img/t.png",
        "format": null, "premium": true
    })))
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["name"], "Phoenix plan");
    assert_eq!(patched["notes"], "Side in Moon.");
    assert_eq!(patched["format"], Value::Null);
    assert_eq!(patched["premium"], true);
    assert_eq!(patched["description"], "Every matchup, in and out.", "kept");
    assert_eq!(patched["tags"], json!(["modern", "tempo"]), "kept");
    assert_eq!(patched["matchups"].as_array().unwrap().len(), 2);

    // Lists: bob's own private guide and a second public one of his.
    let bobs_guide = create(
        &app,
        &bob,
        json!({"name": "Burn vs the world", "deck_id": bobs_public, "visibility": ["public"],
               "format": "Pioneer",
               "matchups": [{"opponent_deck_name": "Control mirror", "opponent_archetype": "Control"}]}),
    )
    .await;
    let hidden = create(
        &app,
        &bob,
        json!({"name": "Bob's secret plan", "deck_id": bobs_private}),
    )
    .await;
    let list = |token: &str, query: &str| {
        let url = format!("{}?{query}", guides_url(&app));
        let request = app.client.get(url).bearer_auth(token.to_owned());
        async move { send(request).await.2 }
    };
    assert_eq!(
        names(&list(&alice, "sort=createdAt&order=asc").await),
        ["Phoenix plan", "Burn vs the world"]
    );
    assert_eq!(
        names(&list(&bob, "sort=createdAt&order=asc").await),
        ["Phoenix plan", "Burn vs the world", "Bob's secret plan"]
    );
    let filters: Vec<(String, Vec<&str>)> = vec![
        ("q=PHOENIX".into(), vec!["Phoenix plan"]),
        ("opponentArchetype=big".into(), vec!["Phoenix plan"]),
        (
            "opponentArchetype=control".into(),
            vec!["Burn vs the world"],
        ),
        (format!("authorId={alice_id}"), vec!["Phoenix plan"]),
        (
            format!("deckId={bobs_public}&sort=createdAt&order=asc"),
            vec!["Phoenix plan", "Burn vs the world"],
        ),
        (format!("deckId={private}"), vec!["Phoenix plan"]),
        ("format=pio".into(), vec!["Burn vs the world"]),
        ("hasVideo=true".into(), vec!["Phoenix plan"]),
        ("hasVideo=false".into(), vec!["Burn vs the world"]),
        (
            "createdAfter=2000-01-01T00:00:00Z&createdBefore=2999-01-01T00:00:00%2B02:00".into(),
            vec!["Burn vs the world", "Phoenix plan"],
        ),
        ("editedAfter=2999-01-01T00:00:00Z".into(), vec![]),
        ("editedBefore=2000-01-01T00:00:00Z".into(), vec![]),
        (
            "sort=editedAt".into(),
            vec!["Burn vs the world", "Phoenix plan"],
        ),
        (
            "sort=createdAt&order=desc".into(),
            vec!["Burn vs the world", "Phoenix plan"],
        ),
    ];
    for (query, expected) in filters {
        assert_eq!(names(&list(&alice, &query).await), expected, "{query}");
    }
    // Counters are all zero: ties go by id, in the sort's direction.
    let ids = |body: &Value| -> Vec<String> {
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["id"].as_str().unwrap().to_owned())
            .collect()
    };
    for sort in ["likes", "views"] {
        let ascending = ids(&list(&alice, &format!("sort={sort}&order=asc")).await);
        let mut descending = ids(&list(&alice, &format!("sort={sort}&order=desc")).await);
        let mut sorted = ascending.clone();
        sorted.sort();
        assert_eq!(ascending, sorted, "{sort}");
        descending.reverse();
        assert_eq!(descending, sorted, "{sort}");
    }
    let summary = list(&alice, "include=summary&limit=1&sort=createdAt&order=asc").await;
    assert_eq!(summary["data"][0]["matchup_count"], 2);
    assert_eq!(summary["data"][0]["colors"], json!([]));
    assert_eq!(summary["data"][0]["featured_cards"], json!([]));
    assert_eq!(summary["pagination"]["total"], 2);
    assert_eq!(summary["pagination"]["total_pages"], 2);
    assert!(
        summary["pagination"]["next"]
            .as_str()
            .unwrap()
            .ends_with("page=2")
    );
    let plain = list(&alice, "").await;
    assert!(plain["data"][0].get("matchup_count").is_none());
    assert!(plain["data"][0].get("description").is_none());
    for bad in [
        "sort=trending",
        "order=up",
        "include=cards",
        "limit=101",
        "page=0",
        "page=101&limit=100",
        "createdAfter=yesterday",
        "deckId=nope",
        "hasVideo=maybe",
    ] {
        let (status, _, body) = send(
            app.client
                .get(format!("{}?{bad}", guides_url(&app)))
                .bearer_auth(&alice),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
    }

    // My guides: every visibility, never archived ones, no author filter needed.
    let my = list(&bob, "").await;
    assert_eq!(names(&my).len(), 3);
    let (status, mine) = get(
        &app,
        &bob,
        &format!("{}/my?sort=createdAt", guides_url(&app)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&mine), ["Bob's secret plan", "Burn vs the world"]);

    // Hidden guides: 404 for others, never 403.
    let hidden_url = guide_url(&app, hidden["id"].as_str().unwrap());
    let (status, body) = get(&app, &alice, &hidden_url).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    let (status, _, body) = send(
        app.client
            .patch(&hidden_url)
            .bearer_auth(&alice)
            .json(&json!({"name": "mine now"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    // A public guide of someone else is readable but not writable.
    let bobs_url = guide_url(&app, bobs_guide["id"].as_str().unwrap());
    let (status, _, _) = send(
        app.client
            .patch(&bobs_url)
            .bearer_auth(&alice)
            .json(&json!({"is_archived": true})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Archive and unarchive: out of lists, and the decks' flag follows.
    let (status, _, archived) = send(patch(json!({"is_archived": true}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(archived["is_archived"], true);
    assert!(!has_sideboard_guide(&app, &alice, &primary).await);
    assert!(!has_sideboard_guide(&app, &alice, &private).await);
    assert!(
        has_sideboard_guide(&app, &bob, &bobs_public).await,
        "bob's own guide still has it"
    );
    assert_eq!(names(&list(&alice, "").await), ["Burn vs the world"]);
    let (_, mine) = get(&app, &alice, &format!("{}/my", guides_url(&app))).await;
    assert!(names(&mine).is_empty());
    let (status, still) = get(&app, &alice, &url).await;
    assert_eq!(
        (status, still["is_archived"].clone()),
        (StatusCode::OK, json!(true))
    );
    send(patch(json!({"is_archived": false}))).await;
    assert!(has_sideboard_guide(&app, &alice, &primary).await);
    assert!(has_sideboard_guide(&app, &alice, &private).await);

    // Detach: 204, then 404 (not attached), the primary deck 400.
    let detach = |deck: &str| {
        app.client
            .delete(format!("{url}/decks/{deck}"))
            .bearer_auth(&alice)
    };
    let response = detach(&private).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(!has_sideboard_guide(&app, &alice, &private).await);
    let (status, _, body) = send(detach(&private)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_envelope(&body, "SERVICE_NOT_FOUND");
    let (status, _, body) = send(detach(&primary)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["deck_id"]);
    let (status, _, _) = send(
        app.client
            .delete(format!("{url}/decks/{primary}"))
            .bearer_auth(&bob),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's guide");
    let (_, detail) = get(&app, &alice, &url).await;
    assert_eq!(detail["attached_deck_ids"], json!([primary, bobs_public]));
}

#[tokio::test]
async fn a_guide_is_created_attached_patched_listed_and_detached_on_memory() {
    a_guide_is_created_attached_patched_listed_and_detached(TestApp::memory().await).await;
}

#[tokio::test]
async fn a_guide_is_created_attached_patched_listed_and_detached_on_postgres() {
    a_guide_is_created_attached_patched_listed_and_detached(TestApp::postgres().await).await;
}

async fn matchups_are_created_patched_and_deleted(app: TestApp) {
    let (_, alice) = app.user_with_token("alice", EVERY_SCOPE).await;
    let (_, bob) = app.user_with_token("bob", EVERY_SCOPE).await;
    let primary = deck(&app, &alice, "Mono-Green", "public").await;
    let guide = create(
        &app,
        &alice,
        json!({"name": "Stompy plan", "deck_id": primary, "visibility": ["public"]}),
    )
    .await;
    let url = format!(
        "{}/matchups",
        guide_url(&app, guide["id"].as_str().unwrap())
    );
    let post = |token: &str, body: Value| {
        app.client
            .post(&url)
            .bearer_auth(token.to_owned())
            .json(&body)
    };

    let (status, _, created) = send(post(
        &alice,
        json!({"opponent_deck_name": "Burn", "difficulty": "EASY", "play_notes": "Race.",
               "special_card_overrides": [{"special_card_type": "in", "card_id": "p", "card_name": "Plummet"}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["difficulty"], "EASY");
    assert_eq!(created["opponent_archetype"], Value::Null);
    assert_eq!(created["special_card_overrides"][0]["quantity"], 1);
    assert_eq!(created["is_featured"], false);
    let matchup_url = format!("{url}/{}", created["id"].as_str().unwrap());

    // Bad enums and bounds: a 400 naming each field, nothing stored.
    let (status, _, body) = send(post(
        &alice,
        json!({"difficulty": "IMPOSSIBLE", "sort_order": -1,
               "notes": "n".repeat(50_001),
               "special_card_overrides": [
                   {"special_card_type": "sideways", "card_id": "", "card_name": "X", "quantity": 0}]}),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        fields(&body),
        [
            "opponent_deck_name",
            "difficulty",
            "notes",
            "sort_order",
            "special_card_overrides[0].special_card_type",
            "special_card_overrides[0].card_id",
            "special_card_overrides[0].quantity"
        ]
    );
    let (status, _, body) = send(post(
        &alice,
        json!({"opponent_deck_name": "X", "difficulty": 3}),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["difficulty"]);
    let (status, _, _) = send(post(&bob, json!({"opponent_deck_name": "Bob's"}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not bob's guide");

    let patch = |token: &str, body: Value| {
        app.client
            .patch(&matchup_url)
            .bearer_auth(token.to_owned())
            .json(&body)
    };
    let (status, _, patched) = send(patch(
        &alice,
        json!({"difficulty": "VERY_HARD", "opponent_archetype": "Aggro", "is_featured": true,
               "special_card_overrides": []}),
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["difficulty"], "VERY_HARD");
    assert_eq!(patched["opponent_archetype"], "Aggro");
    assert_eq!(patched["play_notes"], "Race.", "kept");
    assert_eq!(patched["special_card_overrides"], json!([]));
    let (status, _, body) = send(patch(&alice, json!({"difficulty": "very_hard"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["difficulty"]);
    let (status, _, _) = send(patch(&bob, json!({"difficulty": "EASY"}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(
        app.client
            .patch(format!("{url}/{}", uuid::Uuid::now_v7()))
            .bearer_auth(&alice)
            .json(&json!({"difficulty": "EASY"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no such matchup");

    let (status, detail) = get(&app, &bob, &guide_url(&app, guide["id"].as_str().unwrap())).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(detail["matchups"][0]["difficulty"], "VERY_HARD");
    assert_eq!(detail["hasMatchups"], true);

    let (status, _, _) = send(app.client.delete(&matchup_url).bearer_auth(&bob)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let response = app
        .client
        .delete(&matchup_url)
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let (status, _, _) = send(app.client.delete(&matchup_url).bearer_auth(&alice)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, detail) = get(
        &app,
        &alice,
        &guide_url(&app, guide["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(detail["hasMatchups"], false);
}

#[tokio::test]
async fn matchups_are_created_patched_and_deleted_on_memory() {
    matchups_are_created_patched_and_deleted(TestApp::memory().await).await;
}

#[tokio::test]
async fn matchups_are_created_patched_and_deleted_on_postgres() {
    matchups_are_created_patched_and_deleted(TestApp::postgres().await).await;
}

#[tokio::test]
async fn create_refuses_every_bad_field_at_once_and_foreign_primary_decks() {
    let app = TestApp::memory().await;
    let (_, alice) = app.user_with_token("alice", EVERY_SCOPE).await;
    let (_, bob) = app.user_with_token("bob", EVERY_SCOPE).await;
    let bobs = deck(&app, &bob, "Bob's", "public").await;
    let post = |body: Value| {
        app.client
            .post(guides_url(&app))
            .bearer_auth(&alice)
            .json(&body)
    };
    let (status, _, body) = send(post(json!({
        "visibility": ["friends"], "is_archived": true,
        "matchups": [{"difficulty": "HARD"}]
    })))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        fields(&body),
        [
            "name",
            "is_archived",
            "deck_id",
            "visibility",
            "matchups[0].opponent_deck_name"
        ]
    );
    let (status, _, body) = send(post(json!({"name": "Borrowed", "deck_id": bobs}))).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a guide's primary deck is the caller's own"
    );
    assert_eq!(fields(&body), ["deck_id"]);
    let (status, _, body) = send(post(
        json!({"name": "X", "deck_id": "nope", "colour": "red"}),
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["colour"]);
    let (status, _, body) = send(post(json!({"name": "X", "deck_id": "nope"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["deck_id"]);
    let (_, list) = get(&app, &alice, &guides_url(&app)).await;
    assert_eq!(list["pagination"]["total"], 0, "nothing was stored");

    // Form bodies: repeated keys, booleans, and matchups as JSON text.
    let mine = deck(&app, &alice, "Mine", "public").await;
    let (status, _, created) = send(
        app.client
            .post(guides_url(&app))
            .bearer_auth(&alice)
            .form(&[
                ("name", "Form guide"),
                ("deck_id", mine.as_str()),
                ("tags", "a"),
                ("tags", "b"),
                ("premium", "true"),
                (
                    "matchups",
                    r#"[{"opponent_deck_name":"Elves","difficulty":"MEDIUM"}]"#,
                ),
            ]),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["tags"], json!(["a", "b"]));
    assert_eq!(created["premium"], true);
    assert_eq!(created["matchups"][0]["opponent_deck_name"], "Elves");
}

#[tokio::test]
async fn every_guide_endpoint_needs_credentials_and_its_scope() {
    let app = TestApp::memory().await;
    let (_, owner) = app.user_with_token("owner", EVERY_SCOPE).await;
    let primary = deck(&app, &owner, "Deck", "public").await;
    let guide = create(
        &app,
        &owner,
        json!({"name": "G", "deck_id": primary, "visibility": ["public"]}),
    )
    .await;
    let id = guide["id"].as_str().unwrap();
    let matchup = uuid::Uuid::now_v7();
    let base = guides_url(&app);
    let reads = [
        ("GET", base.clone()),
        ("GET", format!("{base}/my")),
        ("GET", format!("{base}/{id}")),
    ];
    let writes = [
        ("POST", base.clone()),
        ("PATCH", format!("{base}/{id}")),
        ("POST", format!("{base}/{id}/decks")),
        ("DELETE", format!("{base}/{id}/decks/{primary}")),
        ("POST", format!("{base}/{id}/matchups")),
        ("PATCH", format!("{base}/{id}/matchups/{matchup}")),
        ("DELETE", format!("{base}/{id}/matchups/{matchup}")),
    ];
    // A body each endpoint can decode, so only credentials and scopes decide.
    let request = |method: &str, url: &str| {
        let body = if url.ends_with("/decks") {
            json!({"deck_id": primary})
        } else {
            json!({})
        };
        app.client.request(method.parse().unwrap(), url).json(&body)
    };
    let (_, reader) = app
        .user_with_token("reader", "sideboards:read decks:read")
        .await;
    let (_, writer) = app
        .user_with_token("writer", "sideboards:write decks:write")
        .await;
    for (method, url) in reads.iter().chain(writes.iter()) {
        let (status, _, body) = send(request(method, url)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {url}");
        assert_envelope(&body, "SERVICE_AUTHENTICATION_REQUIRED");
    }
    for (method, url) in &reads {
        let (status, _, body) = send(request(method, url).bearer_auth(&writer)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {url}");
        assert_eq!(
            assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE"),
            json!({"required": ["sideboards:read"], "granted": ["decks:write", "sideboards:write"]})
        );
    }
    for (method, url) in &writes {
        let (status, _, body) = send(request(method, url).bearer_auth(&reader)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {url}");
        assert_eq!(
            assert_envelope(&body, "SERVICE_INSUFFICIENT_SCOPE")["required"],
            json!(["sideboards:write"])
        );
    }
    // Unknown games and malformed ids are 404s.
    let (status, _) = get(&app, &owner, &app.api("/games/chess/sideboard-guides")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = get(&app, &owner, &format!("{base}/not-a-uuid")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn partner_lanes_act_as_the_partners_created_by_user() {
    let app = TestApp::memory().await;
    let (founder_id, founder) = app.user_with_token("founder", EVERY_SCOPE).await;
    app.admin(&[
        "partner",
        "create",
        "--slug",
        "acme",
        "--owner",
        "founder",
        "--scopes",
        "decks:read decks:write sideboards:read sideboards:write",
        "--game-scopes",
        "mtg",
    ])
    .await
    .unwrap();
    let key = app
        .admin(&["api-key", "create", "--partner", "acme"])
        .await
        .unwrap();
    let key = key["key"].as_str().unwrap().to_owned();
    let primary = deck(&app, &founder, "Founder's deck", "private").await;

    // An API-key create is owned by the founder, on the founder's private deck.
    let (status, _, created) = send(
        app.client
            .post(guides_url(&app))
            .header("x-api-key", &key)
            .json(&json!({"name": "Partner guide", "deck_id": primary})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["author"]["id"], founder_id.as_str());
    let url = guide_url(&app, created["id"].as_str().unwrap());
    // The founder's PAT sees and edits it; the partner lists it as its own.
    let (status, _, _) = send(
        app.client
            .patch(&url)
            .bearer_auth(&founder)
            .json(&json!({"notes": "edited by the founder"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, list) = send(app.client.get(guides_url(&app)).header("x-api-key", &key)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&list), ["Partner guide"]);
    // `my` needs a user identity: partner-only callers get 401.
    let (status, _, body) = send(
        app.client
            .get(format!("{}/my", guides_url(&app)))
            .header("x-api-key", &key),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_envelope(&body, "SERVICE_AUTHENTICATION_FAILED");

    // Signature alone and signature + PAT work too (signed by `admin sign`).
    let secret = app
        .admin(&[
            "partner",
            "create",
            "--slug",
            "signer",
            "--owner",
            "founder",
            "--scopes",
            "sideboards:read",
            "--game-scopes",
            "*",
        ])
        .await
        .unwrap()["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = "/api/public/v1/games/mtg/sideboard-guides/my";
    for pat in [None, Some(founder.as_str())] {
        let mut args = vec![
            "sign",
            "--partner",
            "signer",
            "--secret",
            &secret,
            "--method",
            "GET",
            "--path",
            path,
        ];
        if let Some(pat) = pat {
            args.extend(["--pat", pat]);
        }
        let signed = app.admin(&args).await.unwrap();
        let mut request = app.client.get(app.url(path));
        for (name, value) in signed["headers"].as_object().unwrap() {
            request = request.header(name.as_str(), value.as_str().unwrap());
        }
        let (status, _, body) = send(request).await;
        match pat {
            None => {
                assert_eq!(status, StatusCode::UNAUTHORIZED, "signature alone: {body}");
            }
            Some(_) => {
                assert_eq!(status, StatusCode::OK, "signature + PAT: {body}");
                assert_eq!(names(&body), ["Partner guide"]);
            }
        }
    }
}

#[tokio::test]
async fn the_demo_seed_has_a_guide_with_two_matchups() {
    let app = TestApp::memory().await;
    let demo = app.admin(&["demo", "seed"]).await.unwrap();
    let token = demo["personal_access_token"].as_str().unwrap();
    let id = demo["sideboard_guide_id"].as_str().unwrap();
    let (status, guide) = get(&app, token, &guide_url(&app, id)).await;
    assert_eq!(status, StatusCode::OK, "{guide}");
    assert_eq!(guide["matchups"].as_array().unwrap().len(), 2);
    assert_eq!(guide["deck_id"], demo["public_deck_id"]);
    let deck = demo["public_deck_id"].as_str().unwrap();
    assert!(has_sideboard_guide(&app, token, deck).await);
}
