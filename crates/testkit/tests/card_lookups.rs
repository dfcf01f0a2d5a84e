//! The PostgreSQL catalog answers a resolution's card lookups from each game's index held in
//! process (`crates/postgres/src/catalog/cache.rs`) while its change listener is connected,
//! and from the database's indexes otherwise. Both ways must keep the catalog contract and
//! answer alike, and the index must follow every change, whoever makes it.

// Tests may unwrap: a failure is a failed test, and the workspace lint is for service code.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use deckhand_domain::catalog::{CardPick, CatalogEntry, PrintingKeys};
use deckhand_domain::ports::Repositories;
use deckhand_postgres::{CardLookups, repositories_with_card_lookups};
use deckhand_testkit::contract::{self, Outcome};
use deckhand_testkit::db::TestDb;
use deckhand_testkit::fixtures::{CATALOG_OF_2019_SIZE, printing};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use uuid::Uuid;

const BOTH: [CardLookups; 2] = [CardLookups::Resident, CardLookups::InDatabase];

/// The catalog's change channel is the database's, shared by every test schema in it: a catalog
/// write in one test drops the index of every instance listening, whichever schema it serves.
/// The test that shows the index ignoring an unannounced change therefore runs alone (write),
/// and the tests that write the catalog beside one another (read); without it, a sibling's
/// import between that test's lookups reloaded its index and failed it.
static CATALOG_CHANNEL: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

async fn repositories(db: &TestDb, lookups: CardLookups) -> Repositories {
    repositories_with_card_lookups(db.pool().clone(), lookups)
        .await
        .unwrap()
}

/// Every catalog case of the repository contract, each in a schema of its own, both ways.
#[tokio::test]
async fn both_ways_keep_the_catalog_contract() {
    let _beside_other_writers = CATALOG_CHANNEL.read().await;
    type Case =
        for<'a> fn(&'a Repositories) -> std::pin::Pin<Box<dyn Future<Output = Outcome> + 'a>>;
    let cases: [(&str, Case); 5] = [
        ("upserts", |repos| {
            Box::pin(contract::catalog_upserts_are_idempotent_and_replace_by_variant(repos))
        }),
        ("exact keys", |repos| {
            Box::pin(contract::printings_are_found_by_every_exact_key(repos))
        }),
        ("names", |repos| {
            Box::pin(contract::cards_are_found_by_name_and_front_face(repos))
        }),
        ("preferred", |repos| {
            Box::pin(contract::preferred_printings_follow_the_documented_order(
                repos,
            ))
        }),
        ("known game", |repos| {
            Box::pin(contract::a_catalog_needs_a_known_game(repos))
        }),
    ];
    for lookups in BOTH {
        for (name, case) in cases {
            let db = TestDb::new().await;
            let repos = repositories(&db, lookups).await;
            case(&repos)
                .await
                .unwrap_or_else(|error| panic!("{name}, {lookups:?}: {error:#}"));
        }
    }
}

fn variant(n: u64) -> Uuid {
    Uuid::parse_str(&format!("00000000-0000-0000-0000-{n:012}")).unwrap()
}

fn card(n: u64) -> Uuid {
    Uuid::parse_str(&format!("00000000-0000-0000-0001-{n:012}")).unwrap()
}

/// Keys of every kind for a request of `count` identifiers: most found, some not.
fn keys(count: u64) -> (PrintingKeys, Vec<String>, Vec<CardPick>) {
    let printings = PrintingKeys {
        variant_ids: (1..=count).map(|n| variant(n * 37 % 46_000)).collect(),
        catalog_a_ids: (1..=count)
            .map(|n| (100_000 + n * 41).to_string())
            .collect(),
        catalog_b_ids: (1..=count)
            .map(|n| (200_000 + n * 43).to_string())
            .collect(),
        catalog_c_ids: (1..=count)
            .map(|n| (300_000 + n * 47).to_string())
            .collect(),
        set_numbers: (1..=count)
            .map(|n| (format!("s{}", n * 53 % 310), (n * 59).to_string()))
            .collect(),
    };
    let names = (1..=count)
        .map(|n| match n % 3 {
            0 => format!("card {}", n * 61 % 21_000),
            1 => format!("card {0} // back {0}", n * 7),
            _ => format!("nothing {n}"),
        })
        .collect();
    let picks = (1..=count)
        .map(|n| CardPick {
            card_id: card(n * 67 % 20_500),
            set: (n % 2 == 0).then(|| format!("s{}", n * 71 % 300)),
        })
        .collect();
    (printings, names, picks)
}

fn by_variant(mut entries: Vec<CatalogEntry>) -> Vec<CatalogEntry> {
    entries.sort_by_key(|entry| entry.printing.variant_id);
    entries
}

/// On a catalog the size of the 2019 import, the index answers 1000 keys of every kind with
/// exactly what the database's lookups return: the same printings with every field, the same
/// cards, the same preferred printing for each pick.
#[tokio::test]
async fn both_ways_answer_alike_at_catalog_scale() {
    let _beside_other_writers = CATALOG_CHANNEL.read().await;
    let db = TestDb::new().await;
    let mut conn = db.pool().get().await.unwrap();
    conn.batch_execute(CATALOG_OF_2019_SIZE).await.unwrap();
    drop(conn);
    let resident = repositories(&db, CardLookups::Resident).await;
    let in_database = repositories(&db, CardLookups::InDatabase).await;
    for count in [1, 1000] {
        let (printings, names, picks) = keys(count);
        let found = |repos: &Repositories| {
            let catalog = repos.catalog.clone();
            let printings = printings.clone();
            async move { by_variant(catalog.find_printings("mtg", &printings).await.unwrap()) }
        };
        let expected = found(&in_database).await;
        assert!(expected.len() > count as usize, "{}", expected.len());
        assert_eq!(found(&resident).await, expected, "{count} keys");

        let named = |repos: &Repositories| {
            let catalog = repos.catalog.clone();
            let names = names.clone();
            async move {
                let mut cards = catalog.cards_named("mtg", &names).await.unwrap();
                cards.sort_by_key(|card| card.card_id);
                cards
            }
        };
        let expected = named(&in_database).await;
        assert!(!expected.is_empty());
        assert_eq!(named(&resident).await, expected, "{count} names");

        let preferred = |repos: &Repositories| {
            let catalog = repos.catalog.clone();
            let picks = picks.clone();
            async move {
                let mut chosen = catalog.preferred_printings("mtg", &picks).await.unwrap();
                chosen.sort_by(|a, b| a.0.cmp(&b.0));
                chosen
            }
        };
        let expected = preferred(&in_database).await;
        assert!(!expected.is_empty());
        assert_eq!(preferred(&resident).await, expected, "{count} picks");
    }
}

/// The name `repos` finds for printing `set`/`number`, if any.
async fn name_at(repos: &Repositories, set: &str, number: &str) -> Option<String> {
    let keys = PrintingKeys {
        set_numbers: vec![(set.into(), number.into())],
        ..PrintingKeys::default()
    };
    let found = repos.catalog.find_printings("mtg", &keys).await.unwrap();
    found.into_iter().next().map(|entry| entry.printing.name)
}

/// Waits up to 10 s for `check` to hold.
async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(Instant::now() < deadline, "{what} never happened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Once loaded, the index answers without the database (a change the triggers do not announce
/// stays unseen), and it follows every announced change: an import by this instance at once,
/// one by another instance, and a direct UPDATE, within moments.
#[tokio::test]
async fn the_index_follows_changes_made_by_anyone() {
    let _alone = CATALOG_CHANNEL.write().await;
    let db = TestDb::new().await;
    let second = db.repositories();
    let mut admin = AsyncPgConnection::establish(db.url()).await.unwrap();
    let mut shock = printing(Uuid::new_v4(), "Shock", "m19", "156");
    second
        .catalog
        .upsert("mtg", &[shock.clone()], deckhand_testkit::fixtures::now())
        .await
        .unwrap();
    // Started after that import, this instance's listener hears of no change before the
    // silent one below, so the index its first lookup loads stays in place.
    let first = repositories(&db, CardLookups::Resident).await;
    assert_eq!(
        name_at(&first, "m19", "156").await.as_deref(),
        Some("Shock")
    );

    admin
        .batch_execute(
            "ALTER TABLE catalog_printings DISABLE TRIGGER catalog_printings_changed; \
             UPDATE catalog_printings SET name = 'Unannounced' WHERE set = 'm19'; \
             ALTER TABLE catalog_printings ENABLE TRIGGER catalog_printings_changed",
        )
        .await
        .unwrap();
    assert_eq!(
        name_at(&first, "m19", "156").await.as_deref(),
        Some("Shock"),
        "the index was not used"
    );

    // An import through this instance is seen by its next lookup.
    shock.printing.collector_number = "157".into();
    first
        .catalog
        .upsert("mtg", &[shock.clone()], deckhand_testkit::fixtures::now())
        .await
        .unwrap();
    assert_eq!(
        name_at(&first, "m19", "157").await.as_deref(),
        Some("Shock")
    );

    // Another instance's import.
    shock.printing.catalog_a_id = Some("777".into());
    second
        .catalog
        .upsert("mtg", &[shock.clone()], deckhand_testkit::fixtures::now())
        .await
        .unwrap();
    let by_catalog_id = PrintingKeys {
        catalog_a_ids: vec!["777".into()],
        ..PrintingKeys::default()
    };
    eventually("another instance's import reaching the index", async || {
        first
            .catalog
            .find_printings("mtg", &by_catalog_id)
            .await
            .unwrap()
            .len()
            == 1
    })
    .await;

    // Anyone's UPDATE, here of a card's name.
    admin
        .batch_execute(&format!(
            "UPDATE catalog_cards SET name_key = 'jolt' WHERE card_id = '{}'",
            shock.printing.card_id
        ))
        .await
        .unwrap();
    eventually("an UPDATE reaching the index", async || {
        first
            .catalog
            .cards_named("mtg", &["jolt".to_owned()])
            .await
            .unwrap()
            .len()
            == 1
    })
    .await;
}
