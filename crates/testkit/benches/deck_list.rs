//! The deck list and the pageview statement on PostgreSQL, over 20,000 seeded decks
//! (`decks_seed.sql`, the data set of the query plans in docs/benchmarks.md at a tenth of the
//! size so the setup takes seconds). The repository is measured (`DeckRepository::list` and
//! `count_view`), without HTTP: the SQL and its plans are what this watches. Figures go into
//! docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use deckhand_domain::decks::trending::view_weight;
use deckhand_domain::decks::{
    DeckFilters, DeckQuery, DeckReader, DeckSort, PageRequest, SortOrder,
};
use deckhand_testkit::db::TestDb;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, SimpleAsyncConnection as _};
use time::{Duration, OffsetDateTime};

const SEED: &str = include_str!("decks_seed.sql");
const DECKS: u32 = 20_000;

async fn seed(db: &TestDb) {
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    conn.batch_execute(&format!("SET deckhand.seed_decks = {DECKS}; {SEED}"))
        .await
        .unwrap();
    // A separate statement each (VACUUM refuses to run in a multi-statement string): sets the
    // visibility map, as autovacuum would on a live table, so index-only scans stay index-only.
    for table in ["decks", "deck_stats", "users"] {
        conn.batch_execute(&format!("VACUUM ANALYZE {table}"))
            .await
            .unwrap();
    }
}

fn query(sort: DeckSort, page: u32, limit: u32, filters: DeckFilters) -> DeckQuery {
    DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        viewer: None,
        filters,
        sort,
        order: SortOrder::Desc,
        page: PageRequest { page, limit },
    }
}

fn deck_list(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let db = runtime.block_on(TestDb::new());
    runtime.block_on(seed(&db));
    let decks = db.repositories().decks;

    let name = |q: &str| DeckFilters {
        name_contains: Some(q.into()),
        ..DeckFilters::default()
    };
    let cases = [
        (
            "editedAt_page1_limit20",
            query(DeckSort::EditedAt, 1, 20, DeckFilters::default()),
        ),
        (
            "views_page1_limit20",
            query(DeckSort::Views, 1, 20, DeckFilters::default()),
        ),
        (
            "editedAt_page100_limit100",
            query(DeckSort::EditedAt, 100, 100, DeckFilters::default()),
        ),
        (
            "views_page100_limit100",
            query(DeckSort::Views, 100, 100, DeckFilters::default()),
        ),
        (
            "q_phoenix_page1_limit20",
            query(DeckSort::EditedAt, 1, 20, name("phoenix")),
        ),
    ];
    let mut group = c.benchmark_group("deck_list_20k");
    group.sample_size(50);
    for (name, query) in &cases {
        let check = runtime.block_on(decks.list(query)).unwrap();
        assert_eq!(check.items.len(), query.page.limit as usize, "{name}");
        group.bench_function(*name, |b| {
            b.to_async(&runtime).iter(|| decks.list(query));
        });
    }
    group.finish();

    let page = runtime
        .block_on(decks.list(&query(DeckSort::EditedAt, 1, 100, DeckFilters::default())))
        .unwrap();
    let ids: Vec<_> = page.items.iter().map(|deck| deck.facts.id).collect();
    let now = OffsetDateTime::now_utc();
    let window = Duration::hours(1);
    let reader = DeckReader {
        game: "mtg".into(),
        viewer: None,
    };
    let mut group = c.benchmark_group("deck_count_view");
    // A new visitor every time: the insert, the counter and trending update.
    let visitors = AtomicU64::new(0);
    group.bench_function("counted", |b| {
        b.to_async(&runtime).iter(|| {
            let n = visitors.fetch_add(1, Ordering::Relaxed);
            let mut visitor = [0; 32];
            visitor[..8].copy_from_slice(&n.to_le_bytes());
            let id = ids[(n % ids.len() as u64) as usize];
            let (decks, reader) = (&decks, &reader);
            async move {
                let count = decks
                    .count_view(id, reader, &visitor, now, window, view_weight(now))
                    .await
                    .unwrap()
                    .unwrap();
                assert!(count.incremented);
            }
        });
    });
    // The same visitor within the window: the dedupe path, nothing written.
    let visitor = [0xff; 32];
    runtime
        .block_on(decks.count_view(ids[0], &reader, &visitor, now, window, view_weight(now)))
        .unwrap();
    group.bench_function("deduplicated", |b| {
        b.to_async(&runtime).iter(|| async {
            let count = decks
                .count_view(ids[0], &reader, &visitor, now, window, view_weight(now))
                .await
                .unwrap()
                .unwrap();
            assert!(!count.incremented);
        });
    });
    group.finish();
}

criterion_group!(benches, deck_list);
criterion_main!(benches);
