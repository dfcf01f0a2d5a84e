//! Format checks on any date of 2019 and 2020 (issue 42), on both stores: the full 2019 file
//! imported with its day (`--as-of 2019-04-01`, `../shared/data/mtg/README.md`) and the
//! shipped Banned and Restricted history answer real cases as a tournament player was told
//! them that day; a card with no record for a format is `legality_unknown`; Commander pairs
//! only partners.

use deckhand_testkit::app::TestApp;
use deckhand_testkit::tournament_decks::CARDS_2019;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::send;

async fn check(app: &TestApp, body: Value) -> Value {
    let (status, _, report) = send(
        app.client
            .post(app.api("/games/mtg/decks/check"))
            .json(&body),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{report}");
    report
}

/// The legality problem (`banned`, `restricted`, `not_legal`, `legality_unknown`) naming
/// `card` in a 60-card `format` deck of 4 `card` and 56 Islands (a vintage deck holds 4, so a
/// restricted card shows), checked as of `day`; `None` when the card may be played.
async fn legality_rule(app: &TestApp, format: &str, card: &str, day: &str) -> Option<String> {
    let text = format!("4 {card}\n56 Island\n");
    let report = check(app, json!({"format": format, "text": text, "as_of": day})).await;
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|problem| {
            problem["card"]["name"] == card
                && ["banned", "restricted", "not_legal", "legality_unknown"]
                    .contains(&problem["rule"].as_str().unwrap())
        })
        .map(|problem| problem["rule"].as_str().unwrap().to_owned())
}

async fn scenario(app: &TestApp) {
    let report = app
        .admin(&[
            "catalog",
            "import",
            "--game",
            "mtg",
            "--source",
            "scryfall",
            "--as-of",
            "2019-04-01",
            CARDS_2019,
        ])
        .await
        .unwrap();
    assert_eq!(report["read"], 45851, "{report}");

    // (format, card, day, the rule a player was told that day; None: playable).
    let banned = Some("banned");
    let cases: [(&str, &str, &str, Option<&str>); 24] = [
        ("modern", "Krark-Clan Ironworks", "2019-01-24", None),
        ("modern", "Krark-Clan Ironworks", "2019-01-25", banned),
        ("modern", "Bridge from Below", "2019-07-11", None),
        ("modern", "Bridge from Below", "2019-07-12", banned),
        ("modern", "Faithless Looting", "2019-06-15", None),
        ("modern", "Faithless Looting", "2019-08-31", banned),
        ("modern", "Hogaak, Arisen Necropolis", "2019-07-01", None),
        ("modern", "Hogaak, Arisen Necropolis", "2019-08-30", banned),
        ("modern", "Stoneforge Mystic", "2019-08-29", banned),
        ("modern", "Stoneforge Mystic", "2019-08-30", None),
        ("modern", "Mox Opal", "2020-01-13", None),
        ("modern", "Mox Opal", "2020-01-14", banned),
        ("pauper", "Gush", "2019-05-19", None),
        ("pauper", "Gush", "2019-05-20", banned),
        ("pauper", "Arcum's Astrolabe", "2019-10-25", banned),
        ("standard", "Rampaging Ferocidon", "2019-08-29", banned),
        ("standard", "Rampaging Ferocidon", "2019-08-30", None),
        ("vintage", "Mental Misstep", "2019-08-29", None),
        (
            "vintage",
            "Mental Misstep",
            "2019-08-30",
            Some("restricted"),
        ),
        ("legacy", "Wrenn and Six", "2019-11-22", banned),
        ("pioneer", "Felidar Guardian", "2019-11-07", None),
        ("pioneer", "Felidar Guardian", "2019-11-08", banned),
        // The 2019 file predates Pioneer: unknown, not illegal.
        (
            "pioneer",
            "Mountain",
            "2019-12-01",
            Some("legality_unknown"),
        ),
        ("legacy", "Crusade", "2020-06-10", banned),
    ];
    for (format, card, day, expected) in cases {
        let rule = legality_rule(app, format, card, day).await;
        assert_eq!(rule.as_deref(), expected, "{card} in {format} on {day}");
    }

    // Commander: the commander's own list applies to commanders; no sideboard; two commanders
    // only when both have Partner, or one is the other's "Partner with".
    let commander = |commanders: &[&str], day: &str| {
        let mut cards: Vec<Value> = commanders
            .iter()
            .map(|name| json!({"section": "commander", "quantity": 1, "name": name}))
            .collect();
        let islands = 100 - u32::try_from(commanders.len()).unwrap();
        cards.push(json!({"section": "mainboard", "quantity": islands, "name": "Island"}));
        json!({"format": "commander", "cards": cards, "as_of": day})
    };
    let pairs = |report: &Value| -> Vec<String> {
        report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|problem| problem["rule"] == "commander")
            .map(|problem| problem["message"].as_str().unwrap().to_owned())
            .collect()
    };
    let krenko_zada = check(
        app,
        commander(&["Krenko, Mob Boss", "Zada, Hedron Grinder"], "2019-06-01"),
    )
    .await;
    assert_eq!(pairs(&krenko_zada).len(), 1, "{krenko_zada}");
    let partners = check(
        app,
        commander(&["Thrasios, Triton Hero", "Tymna the Weaver"], "2019-06-01"),
    )
    .await;
    assert!(pairs(&partners).is_empty(), "{partners}");
    let partnered = check(
        app,
        commander(
            &["Pir, Imaginative Rascal", "Toothy, Imaginary Friend"],
            "2019-06-01",
        ),
    )
    .await;
    assert!(pairs(&partnered).is_empty(), "{partnered}");
    let wrong_pair = check(
        app,
        commander(
            &["Pir, Imaginative Rascal", "Tymna the Weaver"],
            "2019-06-01",
        ),
    )
    .await;
    assert_eq!(pairs(&wrong_pair).len(), 1, "{wrong_pair}");
    let mut with_sideboard = commander(&["Krenko, Mob Boss"], "2019-06-01");
    with_sideboard["cards"]
        .as_array_mut()
        .unwrap()
        .push(json!({"section": "sideboard", "quantity": 1, "name": "Shock"}));
    let report = check(app, with_sideboard).await;
    assert!(
        report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|problem| problem["rule"] == "sideboard_size" && problem["limit"] == 0),
        "{report}"
    );
    for (day, expected) in [("2019-07-07", None), ("2019-07-08", banned)] {
        let mut deck = commander(&["Krenko, Mob Boss"], day);
        deck["cards"][1]["quantity"] = json!(98);
        deck["cards"]
            .as_array_mut()
            .unwrap()
            .push(json!({"section": "mainboard", "quantity": 1, "name": "Paradox Engine"}));
        let report = check(app, deck).await;
        let rule = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|problem| problem["card"]["name"] == "Paradox Engine")
            .map(|problem| problem["rule"].as_str().unwrap().to_owned());
        assert_eq!(
            rule.as_deref(),
            expected,
            "Paradox Engine on {day}: {report}"
        );
    }
}

#[tokio::test]
async fn history_on_the_2019_file_on_the_memory_store() {
    scenario(&TestApp::memory().await).await;
}

#[tokio::test]
async fn history_on_the_2019_file_on_postgres() {
    scenario(&TestApp::postgres().await).await;
}
