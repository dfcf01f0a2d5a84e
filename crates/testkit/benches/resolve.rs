//! Card resolution: one request of 1000 mixed identifiers, against PostgreSQL (a test schema
//! loaded with the 867-printing sample and the bundled catalog) and the memory store.
//! Figures go into docs/benchmarks.md. Needs `../shared/data/mtg/sample-cards.json`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use deckhand::catalog::{Source, import_file, load_bundled};
use deckhand_domain::Services;
use deckhand_domain::catalog::CardIdentifier;
use deckhand_domain::ports::{Repositories, SystemPorts};
use deckhand_domain::settings::ServiceSettings;
use deckhand_testkit::db::TestDb;
use serde_json::Value;

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/mtg/sample-cards.json"
);

/// 1000 identifiers cycling through every kind, plus misses, from the sample's printings.
fn identifiers() -> Vec<CardIdentifier> {
    let cards: Vec<Value> = serde_json::from_slice(&std::fs::read(SAMPLE).unwrap()).unwrap();
    let text = |card: &Value, key: &str| match &card[key] {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    };
    (0..1000)
        .map(|n| {
            let card = &cards[(n * 7) % cards.len()];
            let mut id = CardIdentifier::default();
            match n % 8 {
                0 => id.variant_id = text(card, "id"),
                1 => id.catalog_a_id = text(card, "tcgplayer_id"),
                2 => id.catalog_b_id = text(card, "mtgo_id"),
                3 => id.catalog_c_id = text(card, "arena_id"),
                4 => {
                    id.set = text(card, "set");
                    id.collector_number = text(card, "collector_number");
                }
                5 => id.card_id = text(card, "oracle_id"),
                6 => id.name = text(card, "name").map(|name| name.to_uppercase()),
                _ => id.name = Some(format!("No Such Card {n}")),
            }
            id
        })
        .collect()
}

async fn loaded(repositories: Repositories) -> Services {
    let services = Services::new(
        repositories,
        SystemPorts::system(),
        ServiceSettings::new([0; 32]),
    );
    load_bundled(&services).await.unwrap();
    let day = time::macros::date!(2019 - 04 - 01);
    import_file(
        &services,
        "mtg",
        Source::Scryfall,
        Path::new(SAMPLE),
        Some(day),
    )
    .await
    .unwrap();
    services
}

fn resolve_1000(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let identifiers = identifiers();
    let db = runtime.block_on(TestDb::new());
    let stores = [
        ("postgres", runtime.block_on(loaded(db.repositories()))),
        (
            "memory",
            runtime.block_on(loaded(deckhand_memory::repositories())),
        ),
    ];
    let mut group = c.benchmark_group("resolve_1000_mixed_identifiers");
    group.sample_size(30);
    for (name, services) in &stores {
        let game = runtime.block_on(services.catalog.game("mtg")).unwrap();
        let check = runtime
            .block_on(services.catalog.resolve(&game, &identifiers, None))
            .unwrap();
        assert_eq!(check.resolved.len() + check.unresolved.len(), 1000);
        assert!(check.resolved.len() >= 800, "{}", check.resolved.len());
        group.bench_function(*name, |b| {
            b.to_async(&runtime)
                .iter(|| services.catalog.resolve(&game, &identifiers, None));
        });
    }
    group.finish();
}

criterion_group!(benches, resolve_1000);
criterion_main!(benches);
