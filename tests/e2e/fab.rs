//! Flesh and Blood over HTTP (issue 43), on both stores: the slice of the real file imported
//! through the admin command (twice: nothing changes), its cards resolved by every `fab`
//! identifier, a deck made of them exported as text and read back to the same text.

use deckhand_testkit::app::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{event_subjects, problem_rules, send};

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
                "visibility": ["Public"],
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
    shows_the_hero_as_featured_card(&app, &token, record["id"].as_str().unwrap()).await;
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

/// The featured cards of a fab deck as lists and details show them: slot, key, label, order
/// and name.
fn featured(deck: &Value) -> Vec<(&str, &str, &str, u64, &str)> {
    deck["featured_cards"]
        .as_array()
        .unwrap_or_else(|| panic!("no featured_cards: {deck}"))
        .iter()
        .map(|card| {
            (
                card["slot"].as_str().unwrap(),
                card["slotKey"].as_str().unwrap(),
                card["label"].as_str().unwrap(),
                card["sortOrder"].as_u64().unwrap(),
                card["name"].as_str().unwrap(),
            )
        })
        .collect()
}

const HERO_FEATURED: [(&str, &str, &str, u64, &str); 1] =
    [("hero", "hero:0", "Hero", 0, "Dorinthea Ironsong")];

/// A deck of a hero, Dawnblade and the three Sink Below: the hero is its featured card in the
/// list and the detail, its colours the three pitches, its expanded cards its sections in
/// game order; a chosen featured card still replaces the hero, and `null` brings it back.
async fn shows_the_hero_as_featured_card(app: &TestApp, token: &str, id: &str) {
    let (status, _, list) = send(
        app.client
            .get(app.api("/games/fab/decks?include=summary&q=Dorinthea"))
            .bearer_auth(token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let item = &list["data"][0];
    assert_eq!(item["id"], id, "{list}");
    assert_eq!(featured(item), HERO_FEATURED);
    assert_eq!(item["colors"], json!(["red", "yellow", "blue"]));
    let detail = |app: &TestApp| {
        send(
            app.client
                .get(app.api(&format!("/games/fab/decks/{id}?expand=cards")))
                .bearer_auth(token),
        )
    };
    let (status, _, deck) = detail(app).await;
    assert_eq!(status, StatusCode::OK, "{deck}");
    assert_eq!(featured(&deck), HERO_FEATURED);
    let sections: Vec<(&str, &str, u64, usize)> = deck["expanded_cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|section| {
            (
                section["section"].as_str().unwrap(),
                section["label"].as_str().unwrap(),
                section["count"].as_u64().unwrap(),
                section["cards"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        sections,
        [
            ("hero", "Hero", 1, 1),
            ("arena", "Arena", 1, 1),
            ("deck", "Deck", 8, 3)
        ]
    );
    let names: Vec<&str> = deck["expanded_cards"][2]["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|card| card["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Sink Below (blue)",
            "Sink Below (red)",
            "Sink Below (yellow)"
        ]
    );
    assert_eq!(
        deck["expanded_cards"][2]["cards"][1]["colors"],
        json!(["red"])
    );

    let patch = |featured: Value| {
        send(
            app.client
                .patch(app.api(&format!("/games/fab/decks/{id}")))
                .bearer_auth(token)
                .json(&json!({"featured": featured})),
        )
    };
    let (status, _, chosen) = patch(json!([{"slot": "cover", "name": "Dawnblade"}])).await;
    assert_eq!(status, StatusCode::OK, "{chosen}");
    let (_, _, deck) = detail(app).await;
    assert_eq!(
        featured(&deck),
        [("cover", "cover:0", "Cover", 0, "Dawnblade")]
    );
    let (status, _, cleared) = patch(Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    let (_, _, deck) = detail(app).await;
    assert_eq!(featured(&deck), HERO_FEATURED);
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
    // The hero is the featured card, in the list and the detail.
    assert_eq!(featured(item), HERO_FEATURED);
    assert_eq!(featured(&deck), HERO_FEATURED);
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
    // Legal in its format, as its own check says.
    let (status, _, report) = send(
        app.client
            .get(app.api(&format!("/games/fab/decks/{id}/check"))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(
        (&report["format"]["slug"], &report["legal"]),
        (&json!("cc"), &json!(true)),
        "{report}"
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

/// Dorinthea Ironsong's Classic Constructed list as deck text: her hero card, three arena cards
/// and 69 deck cards, 3 of each (the demo's deck).
const DORINTHEA_TEXT: &str = "\
Hero
1 Dorinthea Ironsong

Arena
1 Dawnblade
1 Braveforge Bracers
1 Refraction Bolters

Deck
3 Biting Blade (red)
3 Biting Blade (yellow)
3 Biting Blade (blue)
3 Driving Blade (red)
3 Driving Blade (yellow)
3 Driving Blade (blue)
3 Ironsong Response (red)
3 Ironsong Response (yellow)
3 Ironsong Response (blue)
3 Overpower (red)
3 Overpower (yellow)
3 Sharpen Steel (red)
3 Sharpen Steel (yellow)
3 Sharpen Steel (blue)
3 Steelblade Shunt (red)
3 Steelblade Shunt (yellow)
3 Steelblade Shunt (blue)
3 Stroke of Foresight (red)
3 Stroke of Foresight (blue)
3 Warrior's Valor (red)
3 Warrior's Valor (yellow)
3 Sink Below (red)
3 Sink Below (blue)
";

async fn check(app: &TestApp, format: &str, text: &str) -> Value {
    let (status, _, report) = send(
        app.client
            .post(app.api("/games/fab/decks/check"))
            .json(&json!({"format": format, "text": text})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    report
}

fn owned(expected: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    expected
        .iter()
        .map(|(rule, card)| ((*rule).to_owned(), card.map(str::to_owned)))
        .collect()
}

/// Classic Constructed and Blitz over HTTP: their rules in the formats list, a Dorinthea
/// Ironsong deck by text legal in cc, and each of fab's rules broken on its own.
async fn fab_decks_are_checked(app: TestApp, file: &str) {
    app.admin(&[
        "catalog",
        "import",
        "--game",
        "fab",
        "--source",
        "fab-cards",
        "--as-of",
        "2026-05-16",
        file,
    ])
    .await
    .unwrap();
    let (status, _, formats) = send(app.client.get(app.api("/games/fab/formats"))).await;
    assert_eq!(status, StatusCode::OK, "{formats}");
    let rules: Vec<(&str, &Value)> = formats
        .as_array()
        .unwrap()
        .iter()
        .map(|format| (format["slug"].as_str().unwrap(), &format["rules"]))
        .collect();
    assert_eq!(
        rules[0],
        (
            "cc",
            &json!({"main_min": 60, "main_max": null, "sideboard_max": null, "copy_limit": 3,
                "singleton": false, "commander": null, "pool_max": 80, "hero": {"young": false}})
        )
    );
    assert_eq!(rules[1].1["hero"], json!({"young": true}));
    assert_eq!(
        (
            &rules[1].1["main_min"],
            &rules[1].1["main_max"],
            &rules[1].1["pool_max"]
        ),
        (&json!(40), &json!(40), &json!(52))
    );
    assert!(rules[2..].iter().all(|(_, rules)| rules.is_null()));

    let report = check(&app, "cc", DORINTHEA_TEXT).await;
    assert_eq!(report["legal"], true, "{report}");
    assert_eq!(report["format"]["slug"], "cc");

    // Each rule broken alone.
    let young = DORINTHEA_TEXT.replace("1 Dorinthea Ironsong", "1 Dorinthea");
    let report = check(&app, "cc", &young).await;
    assert_eq!(
        problem_rules(&report),
        owned(&[
            ("hero", Some("Dorinthea")),
            ("not_legal", Some("Dorinthea"))
        ])
    );
    assert_eq!(
        report["problems"][0]["message"],
        "Dorinthea is a young hero; Classic Constructed needs an adult hero"
    );
    let no_hero = DORINTHEA_TEXT.replace("1 Dorinthea Ironsong\n", "");
    let report = check(&app, "cc", &no_hero).await;
    assert_eq!(problem_rules(&report), owned(&[("hero", None)]));
    assert_eq!(report["problems"][0]["count"], 0);

    let four = format!("{DORINTHEA_TEXT}\nInventory\n1 Sink Below (red)\n3 Sink Below (yellow)\n");
    let report = check(&app, "cc", &four).await;
    assert_eq!(
        problem_rules(&report),
        owned(&[("copy_limit", Some("Sink Below (red)"))])
    );
    assert_eq!(
        (
            &report["problems"][0]["count"],
            &report["problems"][0]["limit"]
        ),
        (&json!(4), &json!(3))
    );

    let other_class = format!("{DORINTHEA_TEXT}\nInventory\n1 Alpha Rampage (red)\n");
    let report = check(&app, "cc", &other_class).await;
    assert_eq!(
        problem_rules(&report),
        owned(&[("hero_legality", Some("Alpha Rampage (red)"))])
    );

    let banned = format!("{DORINTHEA_TEXT}\nInventory\n1 Art of War (yellow)\n");
    let report = check(&app, "cc", &banned).await;
    assert_eq!(
        problem_rules(&report),
        owned(&[("banned", Some("Art of War (yellow)"))])
    );

    let short = DORINTHEA_TEXT.replace(
        "3 Warrior's Valor (red)\n3 Warrior's Valor (yellow)\n3 Sink Below (red)\n\
         3 Sink Below (blue)\n",
        "",
    );
    let report = check(&app, "cc", &short).await;
    assert_eq!(problem_rules(&report), owned(&[("main_size", None)]));
    assert_eq!(report["problems"][0]["section"], "deck");
    assert_eq!(report["problems"][0]["count"], 57);

    let big = format!(
        "{DORINTHEA_TEXT}\nInventory\n3 Overpower (blue)\n3 Stroke of Foresight (yellow)\n\
         3 Warrior's Valor (blue)\n"
    );
    let report = check(&app, "cc", &big).await;
    assert_eq!(problem_rules(&report), owned(&[("pool_size", None)]));
    assert_eq!(
        (
            &report["problems"][0]["count"],
            &report["problems"][0]["limit"]
        ),
        (&json!(81), &json!(80))
    );

    let unknown = format!("{DORINTHEA_TEXT}\nInventory\n1 No Such Card\n");
    let report = check(&app, "cc", &unknown).await;
    assert_eq!(problem_rules(&report), owned(&[("unresolved", None)]));

    // The same list in Blitz: the wrong hero's age, too many cards, too many copies.
    let report = check(&app, "blitz", DORINTHEA_TEXT).await;
    let codes: std::collections::BTreeSet<String> = problem_rules(&report)
        .into_iter()
        .map(|(rule, _)| rule)
        .collect();
    assert_eq!(
        codes.into_iter().collect::<Vec<_>>(),
        ["copy_limit", "hero", "main_size", "not_legal", "pool_size"]
    );

    // A format with legality only is still refused, naming it.
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/fab/decks/check"))
            .json(&json!({"format": "open", "text": DORINTHEA_TEXT})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["details"]["fields"][0]["code"], "no_rules", "{body}");
    assert!(body["message"].as_str().unwrap().contains("Open"), "{body}");
}

#[tokio::test]
async fn fab_decks_are_checked_in_memory() {
    fab_decks_are_checked(TestApp::memory().await, SLICE).await;
}

/// On PostgreSQL, from the whole real file.
#[tokio::test]
async fn fab_decks_are_checked_on_postgres() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/data/fab/fab-cards-3.8.6.jsonl.gz"))
        .find(|path| path.is_file())
        .expect("shared/data/fab/fab-cards-3.8.6.jsonl.gz beside the checkout");
    fab_decks_are_checked(TestApp::postgres().await, file.to_str().unwrap()).await;
}

/// Everything else a deck does works for a `fab` deck unchanged (issue 43): the list and its
/// `cards=` filter, history and rollback, a fork and its compare, a strategy guide, and the
/// events of it all in `fab`'s feed.
async fn a_fab_deck_lives_like_any_other(app: TestApp) {
    import(&app).await;
    let (_, token) = app
        .user_with_token("fabian", "decks:read decks:write")
        .await;
    let api = |path: &str| app.api(&format!("/games/fab{path}"));
    let hero = json!({"section": "hero", "quantity": 1, "cardIdentifier": "dorinthea-ironsong"});
    let (status, _, deck) = send(
        app.client
            .post(api("/decks"))
            .bearer_auth(&token)
            .json(&json!({
                "name": "Dorinthea",
                "visibility": ["public"],
                "cards": [hero, {"section": "deck", "quantity": 3, "name": "Sink Below", "pitch": 1}],
            })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{deck}");
    let id = deck["id"].as_str().unwrap().to_owned();
    let deck_url = |path: &str| api(&format!("/decks/{id}{path}"));

    // The list, with and without a card the deck plays.
    let (_, _, resolved) = send(app.client.post(api("/cards/resolve")).json(&json!({
        "identifiers": [{"name": "Sink Below", "pitch": "red"}, {"name": "Sink Below", "pitch": "blue"}]
    })))
    .await;
    let card = |index: usize| {
        resolved["resolved"][index]["card"]["cardId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (red, blue) = (card(0), card(1));
    let listed = |query: String| {
        let request = app.client.get(api(&format!("/decks?{query}")));
        async move {
            let (status, _, page) = send(request).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|deck| deck["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        listed(format!("cards={red}")).await,
        std::slice::from_ref(&id)
    );
    assert!(listed(format!("cards={blue}")).await.is_empty());

    // A second version, its history, and a rollback to the first as a third.
    let (status, _, saved) = send(app.client.patch(deck_url("")).bearer_auth(&token).json(
        &json!({
            "name": "Dorinthea, blue",
            "cards": [hero, {"section": "deck", "quantity": 3, "name": "Sink Below", "pitch": 3}],
        }),
    ))
    .await;
    assert_eq!(
        (status, saved["version"].as_i64()),
        (StatusCode::OK, Some(2)),
        "{saved}"
    );
    assert_eq!(
        listed(format!("cards={blue}")).await,
        std::slice::from_ref(&id)
    );
    let (_, _, versions) = send(app.client.get(deck_url("/versions"))).await;
    assert_eq!(versions.as_array().map(Vec::len), Some(2), "{versions}");
    let (status, _, rolled) = send(
        app.client
            .post(deck_url("/rollback"))
            .bearer_auth(&token)
            .json(&json!({"version_number": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{rolled}");
    assert_eq!(
        (rolled["name"].as_str(), rolled["version"].as_i64()),
        (Some("Dorinthea"), Some(3))
    );

    // A fork keeps its credit, and the compare names the card that differs by its pitch.
    let (status, _, fork) = send(
        app.client
            .post(deck_url("/fork"))
            .bearer_auth(&token)
            .json(&json!({"name": "Dorinthea, mine"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    assert_eq!(fork["forked_from"]["deck_id"], id.as_str());
    let fork_id = fork["id"].as_str().unwrap();
    let (status, _, saved) = send(
        app.client
            .patch(api(&format!("/decks/{fork_id}")))
            .bearer_auth(&token)
            .json(&json!({"cards": [hero, {"section": "deck", "quantity": 2, "name": "Sink Below", "pitch": 1}]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    let (status, _, diff) = send(
        app.client
            .get(deck_url(&format!("/compare/{fork_id}")))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    let deck_section = &diff["sections"][0];
    assert_eq!(deck_section["section"], "deck", "{diff}");
    assert_eq!(
        deck_section["changed"][0]["name"], "Sink Below (red)",
        "{diff}"
    );

    // A strategy guide.
    let (status, _, guide) = send(
        app.client
            .put(deck_url("/guide"))
            .bearer_auth(&token)
            .json(&json!({"content_type": "markdown", "content": "Pitch blue to block."})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{guide}");
    let (_, _, detail) = send(app.client.get(deck_url(""))).await;
    assert_eq!(detail["hasGuide"], true);

    // fab's feed lists it all, of fab's decks.
    let (status, _, page) = send(
        app.client
            .get(api("/events?types=deck.*"))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let events = event_subjects(&page);
    for expected in [("deck.created", id.as_str()), ("deck.created", fork_id)] {
        assert!(events.contains(&expected), "{expected:?} in {events:?}");
    }
    assert!(
        events.iter().filter(|(_, subject)| *subject == id).count() >= 3,
        "created, updated and rolled back: {events:?}"
    );
}

#[tokio::test]
async fn a_fab_deck_lives_like_any_other_in_memory() {
    a_fab_deck_lives_like_any_other(TestApp::memory().await).await;
}

#[tokio::test]
async fn a_fab_deck_lives_like_any_other_on_postgres() {
    a_fab_deck_lives_like_any_other(TestApp::postgres().await).await;
}
