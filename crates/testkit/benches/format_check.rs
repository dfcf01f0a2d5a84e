//! Format checks over HTTP on PostgreSQL (issue 28): a 100-card commander deck and a 75-card
//! modern deck of real 2019 cards, stored (`GET .../decks/{id}/check`) and inline
//! (`POST .../decks/check`). Times are whole round trips on loopback (client included, so an
//! upper bound of the server's time); after each case it prints the statements per check and
//! their execution time on PostgreSQL (`pg_stat_statements`). Figures go into
//! docs/benchmarks.md. Needs `../shared/data/mtg/default-cards-2019.jsonl.gz`; the statement
//! count is also a test (`tests/check_cost.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use deckhand::catalog::{Source, import_file};
use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use deckhand_testkit::db::statements::{StatementCounter, track_statements};
use deckhand_testkit::tournament_decks::tournament_decks;
use serde_json::{Value, json};

async fn answer(request: reqwest::RequestBuilder) -> Value {
    let response = request.send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    response.json().await.unwrap()
}

fn format_check(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let decks = tournament_decks().unwrap();
    let cluster = OwnCluster::start("bench-format-check").unwrap();
    runtime.block_on(track_statements(&cluster)).unwrap();
    let mut app = runtime.block_on(
        TestApp::builder(Store::PostgresAt(cluster.url()))
            .rate_limits(None)
            .start(),
    );
    app.kill_webhook_worker();
    let printings = std::env::temp_dir().join("deckhand-bench-format-check.jsonl");
    std::fs::write(&printings, &decks.printings).unwrap();
    runtime
        .block_on(import_file(
            &app.services,
            "mtg",
            Source::Scryfall,
            Path::new(&printings),
            Some(time::macros::date!(2019 - 04 - 01)),
        ))
        .unwrap();
    let (_, token) = runtime.block_on(app.user_with_token("player", "decks:read decks:write"));
    let formats = runtime.block_on(answer(app.client.get(app.api("/games/mtg/formats"))));
    let mut counter = runtime.block_on(StatementCounter::new(&cluster.url()));

    let mut group = c.benchmark_group("format_check");
    group.sample_size(50);
    for (slug, cards) in [("commander", &decks.commander), ("modern", &decks.modern)] {
        let format = formats
            .as_array()
            .unwrap()
            .iter()
            .find(|format| format["slug"] == slug)
            .unwrap()["id"]
            .clone();
        let created = runtime.block_on(answer(
            app.client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&token)
                .json(&json!({"name": slug, "visibility": ["public"],
                              "format": format, "cards": cards})),
        ));
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
            let first = runtime.block_on(answer(request()));
            assert_eq!(first["legal"], true, "{first}");
            runtime.block_on(counter.reset()).unwrap();
            let checks = AtomicU64::new(0);
            group.bench_function(format!("{slug}_{kind}"), |b| {
                b.to_async(&runtime).iter(|| async {
                    checks.fetch_add(1, Ordering::Relaxed);
                    answer(request()).await
                });
            });
            let (sent, _) = runtime.block_on(counter.sent()).unwrap();
            let checks = checks.load(Ordering::Relaxed) as f64;
            println!(
                "format_check/{slug}_{kind}: {checks} checks, {:.2} statements and {:.3} ms of \
                 PostgreSQL execution per check",
                sent.statements as f64 / checks,
                sent.exec_ms / checks,
            );
        }
    }
    group.finish();
}

criterion_group!(benches, format_check);
criterion_main!(benches);
