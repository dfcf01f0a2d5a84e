//! What the service costs PostgreSQL, counted by `pg_stat_statements` on a cluster of the
//! test's own:
//!
//! - the check of a 100-card commander deck and of a 75-card modern deck (real 2019 cards),
//!   stored (`GET .../decks/{id}/check`) and inline (`POST .../decks/check`): each at most two
//!   statements, so clients can check on every keystroke (issue 28; timings: the
//!   `format_check` benchmark);
//! - a deck create (issue 27): one statement with its counters, history record and event; a
//!   fork: that one and the read of its source;
//! - an idle instance (issue 27): nothing while it waits, and once a minute its webhook
//!   worker's safety round and its prune round.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

use std::path::Path;
use std::time::Duration;

use deckhand::catalog::{Source, import_file};
use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use deckhand_testkit::db::statements::{StatementCounter, track_statements};
use deckhand_testkit::tournament_decks::tournament_decks;
use serde_json::{Value, json};

/// Checks of each kind counted; the count per check is their average.
const CHECKS: i64 = 10;

async fn answer(request: reqwest::RequestBuilder) -> Value {
    let response = request.send().await.unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{status} {body}");
    body
}

/// An app on a cluster of its own named `name`, counting statements, with nothing but requests
/// reaching the server while it counts (no rate limits, no webhook worker).
async fn counted_app(name: &str) -> (OwnCluster, TestApp) {
    let cluster = OwnCluster::start(name).expect("a cluster of our own");
    track_statements(&cluster)
        .await
        .expect("pg_stat_statements");
    let mut app = TestApp::builder(Store::PostgresAt(cluster.url()))
        .rate_limits(None)
        .start()
        .await;
    app.kill_webhook_worker();
    (cluster, app)
}

#[tokio::test]
async fn a_format_check_costs_at_most_two_statements() {
    let decks = tournament_decks().expect("the 2019 cards");
    let (cluster, app) = counted_app("check-cost").await;
    let printings =
        std::env::temp_dir().join(format!("deckhand-check-cost-{}.jsonl", std::process::id()));
    std::fs::write(&printings, &decks.printings).unwrap();
    import_file(
        &app.services,
        "mtg",
        Source::Scryfall,
        Path::new(&printings),
    )
    .await
    .expect("import the decks' cards");
    std::fs::remove_file(&printings).unwrap();
    let (_, token) = app
        .user_with_token("player", "decks:read decks:write")
        .await;
    let formats = answer(app.client.get(app.api("/games/mtg/formats"))).await;
    let format_id = |slug: &str| {
        formats
            .as_array()
            .unwrap()
            .iter()
            .find(|format| format["slug"] == slug)
            .unwrap()["id"]
            .clone()
    };

    let mut counter = StatementCounter::new(&cluster.url()).await;
    for (slug, cards) in [("commander", &decks.commander), ("modern", &decks.modern)] {
        let created = answer(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&token)
                .json(&json!({"name": slug, "visibility": ["public"],
                              "format": format_id(slug), "cards": cards})),
        )
        .await;
        let id = created["id"].as_str().unwrap().to_owned();
        let stored = || {
            app.client
                .get(app.api(&format!("/games/mtg/decks/{id}/check")))
        };
        let inline = || {
            app.client
                .post(app.api("/games/mtg/decks/check"))
                .json(&json!({"format": slug, "cards": cards}))
        };
        for (kind, request) in [
            ("stored", &stored as &dyn Fn() -> reqwest::RequestBuilder),
            ("inline", &inline),
        ] {
            // The first check fills the per-instance caches (card facts, formats).
            let first = answer(request()).await;
            assert_eq!(first["legal"], true, "{slug} {kind}: {first}");
            tokio::time::sleep(Duration::from_millis(200)).await;
            counter.reset().await.unwrap();
            for _ in 0..CHECKS {
                let report = answer(request()).await;
                assert_eq!(report["legal"], true, "{report}");
            }
            let (sent, each) = counter.sent().await.unwrap();
            eprintln!(
                "check cost: {slug} {kind}: {} statements per check, {:.3} ms of server \
                 execution per check; {each:?}",
                sent.statements as f64 / CHECKS as f64,
                sent.exec_ms / CHECKS as f64,
            );
            assert!(
                sent.statements <= 2 * CHECKS,
                "{slug} {kind}: {} statements in {CHECKS} checks: {each:#?}",
                sent.statements
            );
        }
    }
}

/// A create is one statement (deck, counters, first history record, event and read-back), so
/// the event counter's row lock is held only while PostgreSQL runs it; a fork adds the read of
/// its source.
#[tokio::test]
async fn a_deck_create_is_one_statement_and_a_fork_two() {
    let (cluster, app) = counted_app("create-cost").await;
    let (_, token) = app
        .user_with_token("player", "decks:read decks:write")
        .await;
    let create = || {
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "Burn", "visibility": ["public"], "notes": "Go fast."}))
    };
    // The first request fills the per-instance caches (the token, the games).
    let source = answer(create()).await;
    let fork = || {
        app.client
            .post(app.api(&format!(
                "/games/mtg/decks/{}/fork",
                source["id"].as_str().unwrap()
            )))
            .bearer_auth(&token)
            .json(&json!({}))
    };
    answer(fork()).await;
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut counter = StatementCounter::new(&cluster.url()).await;
    for (kind, request, most) in [
        ("create", &create as &dyn Fn() -> reqwest::RequestBuilder, 1),
        ("fork", &fork, 2),
    ] {
        counter.reset().await.unwrap();
        for _ in 0..CHECKS {
            answer(request()).await;
        }
        let (_, each) = counter.sent().await.unwrap();
        // The deferred trigger's bump of the game's change counter runs at the commit, inside
        // the server, and pg_stat_statements counts it as a statement of its own: not sent.
        let sent: i64 = each
            .iter()
            .filter(|(query, _)| !query.starts_with("INSERT INTO deck_list_changes"))
            .map(|(_, calls)| calls)
            .sum();
        assert!(
            sent <= most * CHECKS,
            "{kind}: {sent} statements in {CHECKS} requests: {each:#?}"
        );
    }
    let forks = answer(
        app.client
            .get(app.api(&format!(
                "/games/mtg/decks/{}",
                source["id"].as_str().unwrap()
            )))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(forks["forks"], CHECKS + 1, "{forks}");
}

/// An idle instance sends nothing between its once-a-minute rounds (the webhook worker waits on
/// LISTEN, not on a timer), and those rounds are a handful of small statements: the worker's
/// safety round (dispatch, claim, next due) and the prune round (`deckhand serve` runs one a
/// minute). docs/webhooks.md quotes the figures this prints.
#[tokio::test]
async fn an_idle_instance_sends_a_handful_of_small_statements_a_minute() {
    let cluster = OwnCluster::start("idle-cost").expect("a cluster of our own");
    track_statements(&cluster)
        .await
        .expect("pg_stat_statements");
    let app = TestApp::builder(Store::PostgresAt(cluster.url()))
        .start()
        .await;
    let (_, key) = {
        let (_, token) = app.user_with_token("alice", "decks:read").await;
        app.admin(&[
            "partner",
            "create",
            "--slug",
            "acme",
            "--owner",
            "alice",
            "--scopes",
            "decks:read",
            "--game-scopes",
            "mtg",
        ])
        .await
        .unwrap();
        (
            token,
            app.admin(&["api-key", "create", "--partner", "acme"])
                .await
                .unwrap(),
        )
    };
    let mut counter = StatementCounter::new(&cluster.url()).await;
    for registered in [false, true] {
        if registered {
            answer(
                app.client
                    .post(app.api("/webhooks"))
                    .header("x-api-key", key["key"].as_str().unwrap())
                    .json(&json!({"url": "https://93.184.216.34/hook"})),
            )
            .await;
        }
        // Settled: the worker has fanned out what there was and gone to sleep.
        tokio::time::sleep(Duration::from_secs(1)).await;
        counter.reset().await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let (waiting, each) = counter.sent().await.unwrap();
        assert_eq!(waiting.statements, 0, "sent while idle: {each:#?}");

        counter.reset().await.unwrap();
        let webhooks = &app.services.webhooks;
        webhooks.dispatch(500).await.unwrap();
        assert!(webhooks.claim(8).await.unwrap().is_empty());
        assert_eq!(webhooks.next_due().await.unwrap(), None);
        let (worker, worker_each) = counter.sent().await.unwrap();
        counter.reset().await.unwrap();
        for pruned in app.services.pruning.prune_round(500, 20).await {
            assert_eq!(pruned.deleted.unwrap(), 0, "{}", pruned.name);
        }
        let (pruning, pruning_each) = counter.sent().await.unwrap();
        eprintln!(
            "idle cost (webhook registered: {registered}): nothing in 5 s of waiting; a minute's \
             worker round {} statements ({:.3} ms): {worker_each:?}; prune round {} statements \
             ({:.3} ms): {pruning_each:?}",
            worker.statements, worker.exec_ms, pruning.statements, pruning.exec_ms
        );
        assert!(worker.statements <= 6, "{worker_each:#?}");
        assert!(pruning.statements <= 20, "{pruning_each:#?}");
    }
}
