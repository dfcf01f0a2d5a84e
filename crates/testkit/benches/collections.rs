//! Collections over HTTP on PostgreSQL (issue 44), against the whole 2019 catalog: the import
//! of a 20,000-row Moxfield CSV (`mode=replace`, so every run writes the same 20,000 entries),
//! and the needs of a 100-card deck against that 20,000-entry collection. Times are whole round
//! trips on loopback (client included: an upper bound of the server's time); after each case it
//! prints the statements per request and their execution time on PostgreSQL
//! (`pg_stat_statements`). The same import on the memory store runs through the service.
//! Figures go into docs/benchmarks.md. Needs `../shared/data/mtg/default-cards-2019.jsonl.gz`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use deckhand::catalog::{Source, import_file};
use deckhand_domain::Services;
use deckhand_domain::collections::{
    CollectionCard, CollectionEntry, ImportRequest, ImportSource, WriteMode, export_csv, parse_csv,
};
use deckhand_domain::identity::{Principal, Scope};
use deckhand_domain::ports::SystemPorts;
use deckhand_domain::settings::ServiceSettings;
use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use deckhand_testkit::db::statements::{StatementCounter, track_statements};
use serde_json::{Value, json};
use uuid::Uuid;

const CARDS_2019: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/mtg/default-cards-2019.jsonl.gz"
);
const DAY: time::Date = time::macros::date!(2019 - 04 - 01);
const ROWS: usize = 20_000;

/// English printings of the file, one per set and collector number: (name, set, number).
fn printings() -> Vec<(String, String, String)> {
    let file = std::fs::File::open(CARDS_2019).unwrap();
    let mut seen = std::collections::HashSet::new();
    BufReader::new(flate2::read::MultiGzDecoder::new(file))
        .lines()
        .map(Result::unwrap)
        .filter(|line| line.contains(r#""lang":"en""#))
        // Tokens and emblems are not cards of the catalog.
        .filter(|line| !line.contains("token\"") && !line.contains(r#""layout":"emblem""#))
        .filter_map(|line| {
            let card: Value = serde_json::from_str(&line).ok()?;
            let set = card["set"].as_str()?.to_owned();
            let number = card["collector_number"].as_str()?.to_owned();
            seen.insert((set.clone(), number.clone()))
                .then(|| (card["name"].as_str().unwrap().to_owned(), set, number))
        })
        .collect()
}

/// A Moxfield export of `rows` rows: each printing twice, plain and foil.
fn moxfield_csv(printings: &[(String, String, String)], rows: usize) -> String {
    let entries: Vec<CollectionEntry> = printings
        .iter()
        .flat_map(|(name, set, number)| {
            [false, true].map(|foil| CollectionEntry {
                card: CollectionCard {
                    variant_id: Uuid::nil(),
                    card_id: Uuid::nil(),
                    name: name.clone(),
                    set: set.clone(),
                    collector_number: number.clone(),
                },
                foil,
                quantity: 1 + (number.len() as u32 % 4),
                trade_quantity: 0,
                condition: Some("Near Mint".into()),
                language: Some("English".into()),
            })
        })
        .take(rows)
        .collect();
    export_csv(&entries).unwrap()
}

async fn answer(request: reqwest::RequestBuilder) -> Value {
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

fn collections(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let printings = printings();
    assert!(printings.len() > ROWS / 2 + 100, "{}", printings.len());
    let csv = moxfield_csv(&printings, ROWS);
    println!(
        "collections: a {ROWS}-row Moxfield CSV of {} bytes",
        csv.len()
    );

    let cluster = OwnCluster::start("bench-collections").unwrap();
    runtime.block_on(track_statements(&cluster)).unwrap();
    let mut app = runtime.block_on(
        TestApp::builder(Store::PostgresAt(cluster.url()))
            .rate_limits(None)
            .start(),
    );
    app.kill_webhook_worker();
    runtime
        .block_on(import_file(
            &app.services,
            "mtg",
            Source::Scryfall,
            Path::new(CARDS_2019),
            Some(DAY),
        ))
        .unwrap();
    let (owner, token) = runtime.block_on(app.user_with_token(
        "collector",
        "collection:read collection:write decks:read decks:write",
    ));
    let mut counter = runtime.block_on(StatementCounter::new(&cluster.url()));
    let import = || {
        app.client
            .post(app.api("/games/mtg/collection/import?mode=replace"))
            .bearer_auth(&token)
            .header("content-type", "text/csv")
            .body(csv.clone())
    };
    let first = runtime.block_on(answer(import()));
    assert_eq!(first["entries"], ROWS, "{first}");
    assert_eq!(first["unresolved"], json!([]), "{first}");

    // A 100-card deck: 60 cards of the collection, 40 from outside it.
    let cards: Vec<Value> = printings[..60]
        .iter()
        .chain(&printings[ROWS / 2..ROWS / 2 + 40])
        .map(|(name, set, number)| {
            json!({"section": "mainboard", "quantity": 1, "name": name, "set": set,
                   "collector_number": number})
        })
        .collect();
    let deck = runtime.block_on(answer(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "Hundred", "cards": cards})),
    ));
    let needs_url = app.api(&format!(
        "/games/mtg/decks/{}/needs",
        deck["id"].as_str().unwrap()
    ));
    let needs = || app.client.get(&needs_url).bearer_auth(&token);
    let first = runtime.block_on(answer(needs()));
    assert_eq!(
        first["have"].as_u64().unwrap() + first["need"].as_u64().unwrap(),
        100,
        "{first}"
    );

    let mut group = c.benchmark_group("collections");
    group.sample_size(10);
    for (case, request) in [
        (
            "import_20000_row_moxfield_csv",
            &import as &dyn Fn() -> reqwest::RequestBuilder,
        ),
        ("needs_100_card_deck_of_20000_entries", &needs),
    ] {
        runtime.block_on(counter.reset()).unwrap();
        let requests = AtomicU64::new(0);
        group.bench_function(case, |b| {
            b.to_async(&runtime).iter(|| async {
                requests.fetch_add(1, Ordering::Relaxed);
                answer(request()).await
            });
        });
        let (sent, each) = runtime.block_on(counter.sent()).unwrap();
        let requests = requests.load(Ordering::Relaxed) as f64;
        println!(
            "collections/{case}: {requests} requests, {:.2} statements and {:.3} ms of \
             PostgreSQL execution per request",
            sent.statements as f64 / requests,
            sent.exec_ms / requests,
        );
        for (query, calls) in each.iter().take(12) {
            println!(
                "  {calls:>6}  {}",
                query.chars().take(110).collect::<String>()
            );
        }
    }

    // The plans of the list queries and of the needs' sum, as the adapter writes them.
    for sql in [
        format!(
            "SELECT count(*) FROM (SELECT 1 FROM collection_entries WHERE owner_id = '{owner}' AND game = 'mtg' LIMIT 10001) c"
        ),
        format!(
            "SELECT variant_id, name FROM collection_entries WHERE owner_id = '{owner}' AND game = 'mtg' ORDER BY name_key, set_code, collector_number, foil, variant_id LIMIT 20 OFFSET 9980"
        ),
        format!(
            "SELECT variant_id, name FROM collection_entries WHERE owner_id = '{owner}' AND game = 'mtg' AND name_key LIKE '%dragon%' ORDER BY name_key, set_code, collector_number, foil, variant_id LIMIT 20 OFFSET 0"
        ),
        format!(
            "SELECT wanted.card_id, held.owned FROM unnest(ARRAY(SELECT card_id FROM collection_entries WHERE owner_id = '{owner}' ORDER BY name_key LIMIT 100)) AS wanted (card_id) CROSS JOIN LATERAL (SELECT sum(quantity)::bigint AS owned FROM collection_entries WHERE owner_id = '{owner}' AND game = 'mtg' AND card_id = wanted.card_id) AS held WHERE held.owned IS NOT NULL"
        ),
    ] {
        let plan = std::process::Command::new("psql")
            .arg(cluster.url())
            .args([
                "-X",
                "-q",
                "-c",
                &format!("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {sql}"),
            ])
            .output();
        match plan {
            Ok(plan) => println!("{sql}\n{}", String::from_utf8_lossy(&plan.stdout)),
            Err(error) => println!("psql: {error}"),
        }
    }

    // The memory store, through the service (no HTTP).
    let services = Services::new(
        deckhand_memory::repositories(),
        SystemPorts::system(),
        ServiceSettings::new([0; 32]),
    );
    runtime
        .block_on(import_file(
            &services,
            "mtg",
            Source::Scryfall,
            Path::new(CARDS_2019),
            Some(DAY),
        ))
        .unwrap();
    let user = runtime
        .block_on(app.admin(&["user", "create", "--username", "memory"]))
        .unwrap();
    let principal = Principal::personal_access_token(
        &deckhand_domain::identity::User {
            id: deckhand_domain::identity::UserId(user["id"].as_str().unwrap().parse().unwrap()),
            username: deckhand_domain::identity::Username::parse("memory").unwrap(),
            active: true,
            premium: false,
            password_hash: None,
            created_at: time::OffsetDateTime::now_utc(),
        },
        Scope::ALL.into_iter().collect(),
    );
    let game = runtime.block_on(services.catalog.game("mtg")).unwrap();
    // The body is read as the HTTP layer reads it, so its parse is measured with the import.
    let request = || ImportRequest {
        source: ImportSource::Csv(parse_csv(&csv).unwrap()),
        mode: WriteMode::Replace,
        skip_unresolved: false,
    };
    let started = Instant::now();
    let outcome = runtime
        .block_on(services.collections.import(&principal, &game, request()))
        .unwrap();
    println!(
        "collections/memory import of {ROWS} rows: {:?} ({} entries)",
        started.elapsed(),
        outcome.totals.entries
    );
    group.bench_function("memory_import_20000_row_moxfield_csv", |b| {
        b.to_async(&runtime)
            .iter(|| services.collections.import(&principal, &game, request()));
    });
    group.finish();
}

criterion_group!(benches, collections);
criterion_main!(benches);
