//! What only the PostgreSQL adapter has: a server that can go away, connections it can drop,
//! migrations and constraints.

// Tests may unwrap: a failure is a failed test, and the workspace lint is for service code.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deckhand_auth::TokenHash;
use deckhand_domain::decks::ports::{InsertDeckError, Reviser};
use deckhand_domain::decks::{
    Deck, DeckFilters, DeckId, DeckListing, DeckQuery, DeckSort, ForkedFrom, Page, PageRequest,
    SortOrder,
};
use deckhand_domain::error::is_store_unavailable;
use deckhand_domain::identity::ports::{InsertPatError, InsertUserError};
use deckhand_domain::identity::{PersonalAccessToken, User, UserId};
use deckhand_domain::ports::Repositories;
use deckhand_postgres::{MIGRATIONS, pending_migrations, run_migrations};
use deckhand_testkit::db::{TestDb, database_url};
use deckhand_testkit::fixtures::{deck, now, pat_for, update_to, user};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, RunQueryDsl as _};
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::MigrationHarness;
use uuid::Uuid;

/// Every repository call of a store that cannot be reached, each failing with StoreUnavailable.
async fn assert_every_call_is_unavailable(repos: &Repositories) {
    let error = repos.health.ping().await.unwrap_err();
    assert!(is_store_unavailable(&error), "{error:?}");

    let error = repos
        .users
        .find_by_id(UserId(Uuid::now_v7()))
        .await
        .unwrap_err();
    assert!(is_store_unavailable(&error), "{error:?}");

    let alice = user("alice");
    match repos.users.insert(&alice).await {
        Err(InsertUserError::Unexpected(error)) => {
            assert!(is_store_unavailable(&error), "{error:?}")
        }
        other => panic!("expected an unavailable store, got {other:?}"),
    }
    match repos.pats.insert(&pat_for(&alice)).await {
        Err(InsertPatError::Unexpected(error)) => {
            assert!(is_store_unavailable(&error), "{error:?}")
        }
        other => panic!("expected an unavailable store, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stopped_server_is_reported_unavailable_at_once() {
    // A socket directory with no server in it: what a stopped local PostgreSQL looks like.
    let nowhere = std::env::temp_dir().join(format!("deckhand-nowhere-{}", Uuid::new_v4()));
    let url = format!(
        "postgresql://postgres@/postgres?host={}",
        nowhere.display().to_string().replace('/', "%2F")
    );
    let repos = deckhand_postgres::repositories(deckhand_postgres::connect(&url, 2).await.unwrap());

    let started = Instant::now();
    assert_every_call_is_unavailable(&repos).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_as_unavailable() {
    // Accepts connections (the kernel does, into the backlog) and never speaks: a hung server
    // or a black-holed network. Calls must give up after the pool's timeout, not hang.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "postgresql://postgres@{}/postgres",
        silent.local_addr().unwrap()
    );
    let repos = deckhand_postgres::repositories(deckhand_postgres::connect(&url, 1).await.unwrap());

    let started = Instant::now();
    let error = repos.health.ping().await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(is_store_unavailable(&error), "{error:?}");
    assert!(elapsed >= deckhand_postgres::POOL_TIMEOUT, "{elapsed:?}");
    assert!(elapsed < deckhand_postgres::POOL_TIMEOUT * 2, "{elapsed:?}");
}

#[derive(QueryableByName)]
struct Terminated {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

/// A schema of its own with the user alice in it, and its repositories.
async fn schema_with_alice() -> (TestDb, Repositories, User) {
    let db = TestDb::new().await;
    let repos = db.repositories();
    let alice = user("alice");
    repos.users.insert(&alice).await.unwrap();
    (db, repos, alice)
}

#[tokio::test]
async fn the_pool_recovers_when_the_server_drops_its_connections() {
    let (db, repos, alice) = schema_with_alice().await;

    // What a PostgreSQL restart does to the pool's idle connections. The timeout makes
    // pg_terminate_backend wait until they are gone.
    let mut admin = AsyncPgConnection::establish(database_url()).await.unwrap();
    let terminated: Terminated = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT count(pg_terminate_backend(pid, 5000)) AS count FROM pg_stat_activity \
             WHERE application_name = $1 AND pid <> pg_backend_pid()",
        )
        .bind::<Text, _>(db.schema()),
        &mut admin,
    )
    .await
    .unwrap();
    assert!(terminated.count >= 1);

    assert_eq!(repos.users.find_by_id(alice.id).await.unwrap(), Some(alice));
    repos.health.ping().await.unwrap();
}

/// A synchronous connection, as diesel's migration harness needs; for `spawn_blocking`.
fn blocking_connection(url: &str) -> AsyncConnectionWrapper<AsyncPgConnection> {
    diesel::Connection::establish(url).unwrap()
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

/// Every pooled connection has the statement timeout and no JIT compilation (which cost the
/// gathering of a card's statistics 16 to 20 ms a run and gained nothing: docs/operations.md).
#[tokio::test]
async fn pooled_connections_have_a_statement_timeout_and_no_jit() {
    let db = TestDb::new().await;
    let mut conn = db.pool().get().await.unwrap();
    let setting: Setting = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT current_setting('statement_timeout') || ' ' || current_setting('jit') AS value",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    let expected = format!("{}s off", deckhand_postgres::STATEMENT_TIMEOUT.as_secs());
    assert_eq!(setting.value, expected);
}

/// The backend process of `conn`, which also shows that it answers.
async fn backend_of(conn: &mut AsyncPgConnection) -> String {
    let backend: Setting = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query("SELECT pg_backend_pid()::text AS value"),
        conn,
    )
    .await
    .unwrap();
    backend.value
}

/// The pool is split into shards, one per core, so that a worker's statements stay on its
/// thread; the shards still share their capacity. With two shards of one connection each:
/// a caller takes both (the second made in the shard that is not its home only after the
/// home wait: a connection is made at home while there is room), a third waits while both
/// are out, and whichever is returned reaches the waiter, well within the pool's timeout (at
/// once from its home shard, after the short home wait from the other).
#[tokio::test]
async fn the_shards_of_a_pool_lend_their_connections_to_any_caller_and_any_return_ends_a_wait() {
    let db = TestDb::new().await;
    let pool = deckhand_postgres::connect_in_shards(db.url(), 2, 2)
        .await
        .unwrap();
    let at_once = Duration::from_secs(1);
    let mut first = tokio::time::timeout(at_once, pool.get())
        .await
        .unwrap()
        .unwrap();
    let asked = Instant::now();
    let mut second = tokio::time::timeout(at_once, pool.get())
        .await
        .unwrap()
        .unwrap();
    assert!(asked.elapsed() >= deckhand_postgres::HOME_WAIT);
    assert_ne!(backend_of(&mut first).await, backend_of(&mut second).await);
    let status = pool.status();
    assert_eq!((status.max_size, status.size, status.available), (2, 2, 0));

    let mut held = Some(first);
    let mut returned = second;
    for round in [
        "the second connection returned",
        "the first connection returned",
    ] {
        let waiter = pool.get();
        tokio::pin!(waiter);
        let still_waiting = tokio::time::timeout(Duration::from_millis(100), &mut waiter).await;
        assert!(still_waiting.is_err(), "{round}: no connection was free");
        assert_eq!(pool.status().waiting, 1, "{round}");

        let returned_at = Instant::now();
        drop(returned);
        let mut served = tokio::time::timeout(deckhand_postgres::POOL_TIMEOUT / 2, waiter)
            .await
            .unwrap_or_else(|_| panic!("{round}: the waiter was not served"))
            .unwrap();
        assert!(returned_at.elapsed() < deckhand_postgres::POOL_TIMEOUT / 2);
        backend_of(&mut served).await;
        returned = held.take().unwrap_or_else(|| unreachable!());
        held = Some(served);
    }
    drop((returned, held));
    let status = pool.status();
    assert_eq!((status.size, status.available, status.waiting), (2, 2, 0));
}

/// The connections each shard holds, the workers' shards first.
fn shard_sizes(pool: &deckhand_postgres::Pool) -> Vec<usize> {
    pool.shard_status().iter().map(|shard| shard.size).collect()
}

/// A thread set apart from the HTTP workers (`deckhand serve`'s own: start-up, listeners,
/// background tasks) makes its connections in a shard of its own and borrows only idle ones
/// of the workers' shards, so no worker's connection is driven by it. Three connections on
/// two cores: a worker's shard of one each, and one for the threads set apart.
#[tokio::test]
async fn a_thread_set_apart_makes_connections_only_in_its_own_shard_and_borrows_idle_ones() {
    let db = TestDb::new().await;
    let pool = deckhand_postgres::connect_in_shards(db.url(), 3, 2)
        .await
        .unwrap();
    assert_eq!(shard_sizes(&pool), [0, 0, 0]);
    // The test's thread stands for a worker: its connection is made in its home shard.
    let mut worker = pool.get().await.unwrap();
    let worker_backend = backend_of(&mut worker).await;
    let after_worker = shard_sizes(&pool);
    assert_eq!(after_worker.iter().sum::<usize>(), 1);
    assert_eq!(
        after_worker[2], 0,
        "a worker's connection is made at its home"
    );

    let apart = pool.clone();
    let expected = after_worker.clone();
    let held = tokio::task::spawn_blocking(move || {
        deckhand_postgres::set_this_thread_apart();
        tokio::runtime::Handle::current().block_on(async move {
            let own = apart.get().await.unwrap();
            let mut with_own = expected.clone();
            with_own[2] = 1;
            assert_eq!(shard_sizes(&apart), with_own, "made in its own shard");
            let second = tokio::time::timeout(Duration::from_millis(300), apart.get()).await;
            assert!(
                second.is_err(),
                "nothing idle: it waits for its own shard's connection"
            );
            assert_eq!(
                shard_sizes(&apart),
                with_own,
                "no connection is made for it in a worker's shard, where there is room"
            );
            own
        })
    })
    .await
    .unwrap();

    // The worker's connection returned is idle: lent to the thread set apart at once.
    drop(worker);
    let apart = pool.clone();
    let lent_backend = tokio::task::spawn_blocking(move || {
        deckhand_postgres::set_this_thread_apart();
        tokio::runtime::Handle::current().block_on(async move {
            let mut lent = tokio::time::timeout(Duration::from_secs(1), apart.get())
                .await
                .expect("an idle connection is lent without waiting")
                .unwrap();
            backend_of(&mut lent).await
        })
    });
    let lent_backend = lent_backend.await.unwrap();
    assert_eq!(lent_backend, worker_backend);
    let mut sizes = after_worker;
    sizes[2] = 1;
    assert_eq!(shard_sizes(&pool), sizes, "lent, none made");
    drop(held);
}

#[tokio::test]
async fn migrations_are_idempotent_and_reversible() {
    let db = TestDb::new().await;
    run_migrations(db.url()).await.unwrap();
    assert_eq!(
        pending_migrations(db.url()).await.unwrap(),
        Vec::<String>::new()
    );

    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = blocking_connection(&url);
        conn.revert_all_migrations(MIGRATIONS).unwrap();
    })
    .await
    .unwrap();
    assert!(!pending_migrations(db.url()).await.unwrap().is_empty());

    run_migrations(db.url()).await.unwrap();
    assert_eq!(
        pending_migrations(db.url()).await.unwrap(),
        Vec::<String>::new()
    );
    let repos = db.repositories();
    let alice = user("alice");
    repos.users.insert(&alice).await.unwrap();
    assert_eq!(repos.users.find_by_id(alice.id).await.unwrap(), Some(alice));
}

#[tokio::test]
async fn constraints_refuse_rows_the_domain_would_never_write() {
    let db = TestDb::new().await;
    let url = db.url().to_owned();
    let refused = tokio::task::spawn_blocking(move || {
        let mut conn = blocking_connection(&url);
        let mut insert = |sql: &str| diesel::sql_query(sql).execute(&mut conn).unwrap_err();
        [
            insert(
                "INSERT INTO users VALUES (gen_random_uuid(), 'Alice', true, false, NULL, now())",
            ),
            insert("INSERT INTO users VALUES (gen_random_uuid(), 'al', true, false, NULL, now())"),
            insert(
                "WITH owner AS (INSERT INTO users VALUES \
                 (gen_random_uuid(), 'bob', true, false, NULL, now()) RETURNING id) \
                 INSERT INTO personal_access_tokens (id, user_id, token_hash, scopes, created_at) \
                 SELECT gen_random_uuid(), id, '\\x00'::bytea, '{}', now() FROM owner",
            ),
            insert(
                "WITH owner AS (INSERT INTO users VALUES \
                 (gen_random_uuid(), 'carol', true, false, NULL, now()) RETURNING id) \
                 INSERT INTO personal_access_tokens (id, user_id, token_hash, scopes, created_at) \
                 SELECT gen_random_uuid(), id, sha256('x'), '{decks:read,NULL}', now() FROM owner",
            ),
        ]
    })
    .await
    .unwrap();
    for error in refused {
        assert!(
            matches!(
                error,
                DieselError::DatabaseError(DatabaseErrorKind::CheckViolation, _)
            ),
            "{error:?}"
        );
    }
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    exists: bool,
}

async fn schema_exists(schema: &str) -> bool {
    let mut conn = AsyncPgConnection::establish(database_url()).await.unwrap();
    let found: Exists = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT EXISTS (SELECT FROM information_schema.schemata WHERE schema_name = $1) AS exists",
        )
        .bind::<Text, _>(schema),
        &mut conn,
    )
    .await
    .unwrap();
    found.exists
}

#[tokio::test]
async fn each_test_db_is_isolated() {
    let (one, two) = (TestDb::new().await, TestDb::new().await);
    assert_ne!(one.schema(), two.schema());
    // The same username in both: neither sees the other's rows.
    one.repositories()
        .users
        .insert(&user("alice"))
        .await
        .unwrap();
    two.repositories()
        .users
        .insert(&user("alice"))
        .await
        .unwrap();

    // Held while the status is read: a listener may take a returned connection out for good.
    let _held = one.pool().get().await.unwrap();
    let status = one.repositories().health.pool_status().unwrap();
    assert_eq!(status.max_size, 4);
    assert!(status.size >= 1);

    // Plain SQL on the schema's URL lands in the schema too.
    let mut conn = AsyncPgConnection::establish(two.url()).await.unwrap();
    conn.batch_execute("SELECT username FROM users")
        .await
        .unwrap();
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    value: String,
}

/// One text per row of `query` (whose column is named `value`), on the schema of `db`.
async fn texts(db: &TestDb, query: &str) -> Vec<String> {
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let rows: Vec<Row> = diesel_async::RunQueryDsl::load(diesel::sql_query(query), &mut conn)
        .await
        .unwrap();
    rows.into_iter().map(|row| row.value).collect()
}

const GAME_NAMES: &str = "SELECT name AS value FROM games ORDER BY slug";

/// Deck content is stored with lz4 (migration `2026-11-25-000200_deck_content_lz4`) wherever the
/// server has it, which is when it accepts lz4 as its default: a save's history record of the
/// whole content is then compressed several times faster than with pglz (docs/benchmarks.md).
#[tokio::test]
async fn deck_content_is_compressed_with_lz4_where_the_server_has_it() {
    let db = TestDb::new().await;
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let has_lz4 = conn
        .batch_execute("SET default_toast_compression = lz4")
        .await
        .is_ok();
    let methods = texts(
        &db,
        "SELECT attrelid::regclass || '.' || attname || ' ' || attcompression::text AS value \
         FROM pg_attribute WHERE (attrelid, attname) IN \
         (('decks'::regclass, 'cards'), ('decks'::regclass, 'featured'), \
          ('deck_versions'::regclass, 'content')) ORDER BY 1",
    )
    .await;
    let method = if has_lz4 { "l" } else { "" };
    assert_eq!(
        methods,
        [
            format!("deck_versions.content {method}"),
            format!("decks.cards {method}"),
            format!("decks.featured {method}"),
        ]
    );
}

/// Every GIN index keeps its pending list to 512 kB (migration `2026-12-08-000100`): a search of
/// the index reads the whole list before its tree, and at the default 4 MB a rare card's page
/// read ten times the pages it reads with the list merged (docs/benchmarks.md, "GIN pending
/// lists"). Holds for an index added later too.
#[tokio::test]
async fn every_gin_index_keeps_a_short_pending_list() {
    let db = TestDb::new().await;
    let indexes = texts(
        &db,
        "SELECT c.relname || ' ' || coalesce(array_to_string(c.reloptions, ','), '-') AS value \
         FROM pg_class c JOIN pg_am am ON am.oid = c.relam \
         WHERE am.amname = 'gin' AND c.relnamespace = current_schema()::regnamespace \
         ORDER BY c.relname",
    )
    .await;
    assert_eq!(
        indexes,
        [
            "decks_card_ids gin_pending_list_limit=512",
            "decks_name_trigram gin_pending_list_limit=512",
            "sideboard_guides_format_trigram gin_pending_list_limit=512",
            "sideboard_guides_name_trigram gin_pending_list_limit=512",
            "sideboard_matchups_archetype_trigram gin_pending_list_limit=512",
        ]
    );
}

/// Each row of the history: its number, the record holding its cards (`-`: itself) and whether
/// it stores cards.
const HISTORY_ROWS: &str = "SELECT version_number || ' ' || coalesce(cards_from::text, '-') \
     || ' ' || (content::jsonb ? 'cards')::text AS value FROM deck_versions ORDER BY version_number";

/// Each row of the history: its number and the first record stored with the same card list.
const HISTORY_CARD_LISTS: &str = "SELECT v.version_number || ' ' || (SELECT \
     min(o.version_number) FROM deck_versions o WHERE o.content::jsonb -> 'cards' = v.content::jsonb -> 'cards') \
     AS value FROM deck_versions v ORDER BY v.version_number";

/// A save that keeps the card list stores none (migration `2026-11-25-000300`): its record
/// names the one that holds the list. Reverting the migration (after those that came later:
/// deck content as `json`, `2026-11-25-000400`, the credentials' notifications,
/// `2026-11-25-000500`, and the format checks' tables, `2026-11-26-000100`) gives every
/// record its list back, and migrating again reads every version back as it was.
#[tokio::test]
async fn a_save_that_keeps_the_cards_stores_them_once() {
    let db = TestDb::new().await;
    let repos = db.repositories();
    // Saves 2, 4 and 6 keep the cards; 3 changes them and 5 restores those of 1.
    deckhand_testkit::contract::every_version_reads_back_the_cards_it_was_saved_with(&repos)
        .await
        .unwrap();
    assert_eq!(
        texts(&db, HISTORY_ROWS).await,
        [
            "1 - true",
            "2 1 false",
            "3 - true",
            "4 3 false",
            "5 - true",
            "6 5 false"
        ]
    );
    let deck = DeckId(
        texts(&db, "SELECT id::text AS value FROM decks").await[0]
            .parse()
            .unwrap(),
    );
    let saved = repos.decks.versions(deck).await.unwrap();

    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = blocking_connection(&url);
        // Every migration down to and including the one that moved card lists into the
        // history (later ones come and go without touching it).
        let mut reverted = Vec::new();
        while reverted.last().map(String::as_str) != Some("20261125000300") {
            reverted.push(conn.revert_last_migration(MIGRATIONS).unwrap().to_string());
        }
        assert!(reverted.len() >= 6, "{reverted:?}");
    })
    .await
    .unwrap();
    assert_eq!(
        texts(&db, HISTORY_CARD_LISTS).await,
        ["1 1", "2 1", "3 3", "4 3", "5 1", "6 1"]
    );
    run_migrations(db.url()).await.unwrap();
    assert_eq!(repos.decks.versions(deck).await.unwrap(), saved);
}

/// A save dropped while it waits for its deck's lock (its client hung up) leaves no transaction
/// behind: its connection is closed rather than returned to the pool idle in a transaction,
/// where it would take the lock once free and hold it until the connection's next use.
/// Lists and a deck's detail name their authors from a copy of the usernames kept in process:
/// once read, a page or a detail of the same authors reads no user again. What makes that copy
/// safe is that a username never changes, which the database refuses.
#[tokio::test]
async fn lists_and_details_name_their_authors_from_memory_and_a_username_never_changes() {
    let (db, repos, alice) = schema_with_alice().await;
    let bob = user("bob");
    repos.users.insert(&bob).await.unwrap();
    let mut bobs = None;
    for (owner, name) in [
        (&alice, "Alice's"),
        (&bob, "Bob's"),
        (&alice, "Alice's too"),
    ] {
        let inserted = repos.decks.insert(&deck(owner, name)).await.unwrap();
        if owner.id == bob.id {
            bobs = Some(inserted.facts.id);
        }
    }
    let bobs = bobs.unwrap();
    let query = DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        viewer: None,
        filters: DeckFilters::default(),
        sort: DeckSort::CreatedAt,
        order: SortOrder::Asc,
        page: PageRequest { page: 1, limit: 20 },
    };
    let authors = |page: &Page<DeckListing>| -> Vec<(String, String)> {
        page.items
            .iter()
            .map(|deck| {
                (
                    deck.name.clone(),
                    deck.facts.author.username.as_str().to_owned(),
                )
            })
            .collect()
    };
    let expected = [
        ("Alice's".to_owned(), "alice".to_owned()),
        ("Bob's".to_owned(), "bob".to_owned()),
        ("Alice's too".to_owned(), "alice".to_owned()),
    ];
    assert_eq!(authors(&repos.decks.list(&query).await.unwrap()), expected);

    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let renamed = conn
        .batch_execute(&format!(
            "UPDATE users SET username = 'mallory' WHERE id = '{}'",
            bob.id.0
        ))
        .await
        .unwrap_err();
    assert!(renamed.to_string().contains("never changes"), "{renamed}");

    // With the users table out of reach, the same page and a detail still name their authors.
    conn.batch_execute("ALTER TABLE users RENAME TO users_away")
        .await
        .unwrap();
    let listed = repos.decks.list(&query).await;
    let detail = repos.decks.find_overview(bobs).await;
    conn.batch_execute("ALTER TABLE users_away RENAME TO users")
        .await
        .unwrap();
    assert_eq!(authors(&listed.unwrap()), expected);
    let detail = detail.unwrap().unwrap();
    assert_eq!(
        (
            detail.listing.name.as_str(),
            detail.listing.facts.author.username.as_str()
        ),
        ("Bob's", "bob")
    );
}

/// A save whose deck another save changed between its read and its write is decided again on
/// the deck as it is now: both land, one version each, and neither is lost.
#[tokio::test]
async fn a_save_overtaken_between_its_read_and_its_write_decides_again_on_the_newer_deck() {
    let (db, repos, owner) = schema_with_alice().await;
    let created = repos.decks.insert(&deck(&owner, "First")).await.unwrap();
    let id = created.facts.id;
    let url = db.url().to_owned();
    // The other save, from a pool and a runtime of its own, while this save's reviser runs.
    let overtake = move || {
        let url = url.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let pool = deckhand_postgres::connect(&url, 1).await.unwrap();
                let other = deckhand_postgres::repositories(pool);
                other.decks.revise(id, update_to("Overtaking", now())).await
            })
        })
        .join()
        .unwrap()
        .unwrap()
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_by_reviser = Arc::clone(&seen);
    let rename = update_to("Mine", now());
    let reviser: Reviser = Box::new(move |current: &Deck| {
        let mut seen = seen_by_reviser.lock().unwrap();
        seen.push((current.version, current.content.name.clone()));
        if seen.len() == 1 {
            assert_eq!(overtake().version, 2);
        }
        rename(current)
    });

    let saved = repos.decks.revise(id, reviser).await.unwrap();

    assert_eq!(
        *seen.lock().unwrap(),
        [(1, "First".to_owned()), (2, "Overtaking".to_owned())]
    );
    assert_eq!((saved.version, saved.content.name.as_str()), (3, "Mine"));
    let names: Vec<_> = repos
        .decks
        .versions(id)
        .await
        .unwrap()
        .into_iter()
        .map(|version| (version.version_number, version.content.name))
        .collect();
    assert_eq!(
        names,
        [
            (1, "First".to_owned()),
            (2, "Overtaking".to_owned()),
            (3, "Mine".to_owned())
        ]
    );
}

/// A write whose single statement ran but whose commit failed is reported failed, not saved.
/// A statement outside a transaction commits after its rows are sent, when the deferred
/// triggers (the list counters) run: a failure there, or a fast shutdown ending a commit that
/// waits on a counter's lock, came after the rows, and a 201 was answered for a deck PostgreSQL
/// rolled back (found by `faults::writes_acknowledged_across_a_database_restart_are_all_kept`).
/// A deferred trigger of the test's own refuses the commit of one name.
#[tokio::test]
async fn a_write_whose_commit_fails_is_reported_failed_and_leaves_nothing() {
    let (db, repos, alice) = schema_with_alice().await;
    let kept = repos.decks.insert(&deck(&alice, "Kept")).await.unwrap();
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    conn.batch_execute(
        "CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$; \
         CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT OR UPDATE ON decks \
             DEFERRABLE INITIALLY DEFERRED FOR EACH ROW \
             WHEN (NEW.name = 'Refused at commit') EXECUTE FUNCTION refuse_at_commit()",
    )
    .await
    .unwrap();

    let created = repos.decks.insert(&deck(&alice, "Refused at commit")).await;
    assert!(
        matches!(created, Err(InsertDeckError::Unexpected(_))),
        "{created:?}"
    );
    let saved = repos
        .decks
        .revise(kept.facts.id, update_to("Refused at commit", now()))
        .await;
    assert!(saved.is_err(), "{saved:?}");

    assert_eq!(
        texts(&db, "SELECT name || ' v' || version AS value FROM decks").await,
        ["Kept v1"]
    );
    assert_eq!(
        texts(&db, "SELECT count(*)::text AS value FROM deck_versions").await,
        ["1"]
    );
}

/// A save keeps other saves of its deck out, but not the `KEY SHARE` lock that a row naming the
/// deck (a fork, a like, a guide) takes on it to check its reference. A save that held
/// `FOR UPDATE` made a fork wait on it, and a fork that had already taken the event counter's
/// row deadlocked with a save waiting for that row (a 500, found by `cargo xtask fuzz`).
#[tokio::test]
async fn a_save_under_way_leaves_its_deck_free_to_be_named_by_a_fork() {
    use deckhand_testkit::db::direct::{backend_pid, sessions_waiting_on};

    let (db, repos, alice) = schema_with_alice().await;
    let source = repos
        .decks
        .insert(&deck(&alice, "Source"))
        .await
        .unwrap()
        .facts
        .id;
    // Held here, the event counter stops the save after it has locked its deck.
    let mut counter = AsyncPgConnection::establish(db.url()).await.unwrap();
    counter
        .batch_execute("BEGIN; UPDATE event_log SET last_sequence = last_sequence")
        .await
        .unwrap();
    let counter_pid = backend_pid(&mut counter).await;
    let saving = tokio::spawn({
        let repos = repos.clone();
        async move { repos.decks.revise(source, update_to("Saved", now())).await }
    });
    let mut observer = AsyncPgConnection::establish(db.url()).await.unwrap();
    sessions_waiting_on(&mut observer, counter_pid, Duration::from_secs(10)).await;
    assert!(
        !saving.is_finished(),
        "the save waits for the event counter"
    );

    let mut referrer = AsyncPgConnection::establish(db.url()).await.unwrap();
    referrer
        .batch_execute(&format!(
            "SET lock_timeout = '2s'; BEGIN; \
             SELECT 1 FROM decks WHERE id = '{}' FOR KEY SHARE; COMMIT",
            source.0
        ))
        .await
        .expect("a reference check on the deck does not wait for its save");
    counter.batch_execute("COMMIT").await.unwrap();
    assert_eq!(saving.await.unwrap().unwrap().version, 2);
}

/// Forks of one deck and saves of it, all at once from several connections: every one is
/// written, none is cancelled to break a deadlock, and the source counts every fork.
#[tokio::test]
async fn forks_and_saves_of_one_deck_at_once_are_all_written() {
    const WRITERS: usize = 3;
    const EACH: usize = 40;
    let (_db, repos, alice) = schema_with_alice().await;
    let source = repos
        .decks
        .insert(&deck(&alice, "Source"))
        .await
        .unwrap()
        .facts
        .id;
    let mut writers = tokio::task::JoinSet::new();
    for writer in 0..WRITERS {
        let (forker, alice) = (repos.clone(), alice.clone());
        writers.spawn(async move {
            for n in 0..EACH {
                let mut fork = deck(&alice, &format!("Fork {writer}.{n}"));
                fork.forked_from = Some(ForkedFrom {
                    deck_id: source,
                    version: 1,
                });
                forker
                    .decks
                    .insert(&fork)
                    .await
                    .expect("the fork is written");
            }
        });
        let saver = repos.clone();
        writers.spawn(async move {
            for n in 0..EACH {
                saver
                    .decks
                    .revise(source, update_to(&format!("Save {writer}.{n}"), now()))
                    .await
                    .expect("the save is written");
            }
        });
    }
    while let Some(written) = writers.join_next().await {
        written.unwrap();
    }
    let stored = repos.decks.find(source).await.unwrap().unwrap();
    let written = i32::try_from(WRITERS * EACH).unwrap();
    assert_eq!(stored.version, 1 + written);
    assert_eq!(stored.facts.forks, i64::from(written));
}

#[tokio::test]
async fn a_save_dropped_while_it_waits_leaves_the_deck_unlocked_and_unchanged() {
    let (db, repos, owner) = schema_with_alice().await;
    let created = repos.decks.insert(&deck(&owner, "Held")).await.unwrap();
    let lock = format!(
        "SELECT 1 FROM decks WHERE id = '{}' FOR UPDATE",
        created.facts.id.0
    );
    let mut holder = AsyncPgConnection::establish(db.url()).await.unwrap();
    holder
        .batch_execute(&format!("BEGIN; {lock}"))
        .await
        .unwrap();

    let save = repos
        .decks
        .revise(created.facts.id, update_to("Dropped", now()));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), save)
            .await
            .is_err()
    );
    holder.batch_execute("COMMIT").await.unwrap();

    holder
        .batch_execute(&format!("SET lock_timeout = '5s'; BEGIN; {lock}; COMMIT"))
        .await
        .expect("the dropped save's connection holds the deck's lock");
    let stored = repos.decks.find(created.facts.id).await.unwrap().unwrap();
    assert_eq!((stored.version, stored.content.name.as_str()), (1, "Held"));
}

/// Whichever schema the next test gets, recycled or new, it is as the migrations left it: the
/// rows of the last test are gone, the reference data is whole.
#[tokio::test]
async fn the_next_test_gets_a_schema_as_migrated_even_after_a_test_changed_everything() {
    let first = TestDb::new().await;
    let migrated_games = texts(&first, GAME_NAMES).await;
    // mtg, lorcana and fab.
    assert_eq!(migrated_games.len(), 3, "{migrated_games:?}");
    let alice = user("alice");
    first.repositories().users.insert(&alice).await.unwrap();
    let mut conn = AsyncPgConnection::establish(first.url()).await.unwrap();
    conn.batch_execute(
        "UPDATE games SET name = 'Renamed by a test'; \
         ALTER TABLE games DISABLE TRIGGER games_changed",
    )
    .await
    .unwrap();
    drop(conn);
    drop(first);

    let next = TestDb::new().await;
    assert_eq!(texts(&next, GAME_NAMES).await, migrated_games);
    assert_eq!(
        texts(
            &next,
            "SELECT tgenabled::text AS value FROM pg_trigger WHERE tgname = 'games_changed' \
                      AND tgrelid = 'games'::regclass"
        )
        .await,
        ["O"]
    );
    assert_eq!(
        next.repositories()
            .users
            .find_by_id(alice.id)
            .await
            .unwrap(),
        None
    );
    next.repositories().users.insert(&alice).await.unwrap();
}

/// A failed test's schema is dropped with it, so nothing of a failure reaches another test.
#[test]
fn a_failed_tests_schema_is_dropped() {
    let (sender, receiver) = std::sync::mpsc::channel();
    let failed = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let db = TestDb::new().await;
            sender.send(db.schema().to_owned()).unwrap();
            panic!("a failing test");
        })
    })
    .join();
    assert!(failed.is_err());
    let schema = receiver.recv().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    assert!(!runtime.block_on(schema_exists(&schema)));
}

/// The label of mtg's mainboard section as `repos` answers it.
async fn mainboard_label(repos: &Repositories) -> String {
    let game = repos.catalog.game("mtg").await.unwrap().unwrap();
    game.section("mainboard").unwrap().label.clone()
}

/// Games, sections and formats are held in memory, and every instance drops its copy when the
/// tables change (the triggers' NOTIFY), whoever changed them.
#[tokio::test]
async fn cached_games_follow_changes_made_by_anyone() {
    let db = TestDb::new().await;
    let (first, second) = (db.repositories(), db.repositories());
    let mut admin = AsyncPgConnection::establish(db.url()).await.unwrap();

    // A change the triggers do not announce is not seen once the copy is cached: proof that
    // reads are served from memory. (Until the listener is connected nothing is cached.)
    let deadline = Instant::now() + Duration::from_secs(20);
    for attempt in 0.. {
        let seen = mainboard_label(&first).await;
        admin
            .batch_execute(&format!(
                "ALTER TABLE game_sections DISABLE TRIGGER game_sections_changed; \
                 UPDATE game_sections SET label = 'Unannounced {attempt}' WHERE key = 'mainboard'; \
                 ALTER TABLE game_sections ENABLE TRIGGER game_sections_changed"
            ))
            .await
            .unwrap();
        if mainboard_label(&first).await == seen {
            break;
        }
        assert!(Instant::now() < deadline, "games were never cached");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        second
            .catalog
            .formats("mtg")
            .await
            .unwrap()
            .iter()
            .all(|format| format.slug != "oathbreaker")
    );

    admin
        .batch_execute(
            "UPDATE game_sections SET label = 'Main deck' WHERE key = 'mainboard'; \
             INSERT INTO formats (id, game, slug, name, position) \
             VALUES ('7c5b3a52-52a4-4f33-a7a3-3d3f3c1c0a01', 'mtg', 'oathbreaker', 'Oathbreaker', 99)",
        )
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let formats = second.catalog.formats("mtg").await.unwrap();
        let announced = mainboard_label(&first).await == "Main deck"
            && formats.iter().any(|format| format.slug == "oathbreaker");
        if announced {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a change never reached the caches"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[derive(QueryableByName)]
struct PlanLine {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    line: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

/// Expired idempotency keys are swept a few per claim, found through the expiry index (not a
/// scan of the live keys), and a claim takes no live key of anyone else with it.
#[tokio::test]
async fn claims_sweep_expired_keys_through_the_expiry_index() {
    use deckhand_domain::idempotency::ports::{ClaimRequest, Claimed, KeyClaim};
    use deckhand_domain::idempotency::{Fingerprint, IdempotencyKey};

    let db = TestDb::new().await;
    let mut conn = db.pool().get().await.unwrap();
    // 20,000 live keys and 100 expired ones.
    conn.batch_execute(
        "INSERT INTO idempotency_keys (caller, key, fingerprint, claim_id, claimed_at, expires_at)
         SELECT 'user:' || (n % 50), 'k' || n, sha256(n::text::bytea), gen_random_uuid(),
                now() - interval '1 hour',
                CASE WHEN n <= 100 THEN now() - interval '1 minute' ELSE now() + interval '1 day' END
         FROM generate_series(1, 20100) AS n;
         ANALYZE idempotency_keys;",
    )
    .await
    .unwrap();
    let plan: Vec<PlanLine> = diesel_async::RunQueryDsl::load(
        diesel::sql_query(
            "EXPLAIN SELECT ctid FROM idempotency_keys
             WHERE expires_at <= now() AND NOT (caller = 'user:1' AND key = 'k1')
             LIMIT 8 FOR UPDATE SKIP LOCKED",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    let plan: Vec<String> = plan.into_iter().map(|line| line.line).collect();
    eprintln!("{}", plan.join("\n"));
    assert!(
        plan.iter()
            .any(|line| line.contains("idempotency_keys_by_expiry")),
        "{plan:#?}"
    );

    let keys = db.repositories().idempotency_keys;
    let now = time::OffsetDateTime::now_utc();
    let claim = KeyClaim {
        caller: "user:new".into(),
        key: IdempotencyKey::parse(b"fresh").unwrap(),
        claim_id: Uuid::now_v7(),
    };
    let request = ClaimRequest {
        claim,
        fingerprint: Fingerprint::of("POST", "/x", b""),
        now,
        expires_at: now + time::Duration::days(1),
        abandoned_before: now - time::Duration::minutes(1),
    };
    assert_eq!(keys.claim(&request).await.unwrap(), Claimed::Claimed);
    let counts: Count = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT count(*) FILTER (WHERE expires_at <= now()) AS count FROM idempotency_keys",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    assert_eq!(
        counts.count,
        100 - 8,
        "eight expired keys swept by one claim"
    );
    let live: Count = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT count(*) FILTER (WHERE expires_at > now()) AS count FROM idempotency_keys",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    assert_eq!(live.count, 20_000 + 1);
}

#[derive(QueryableByName)]
struct PlanUse {
    #[diesel(sql_type = Text)]
    statement: String,
    #[diesel(sql_type = BigInt)]
    generic_plans: i64,
    #[diesel(sql_type = BigInt)]
    custom_plans: i64,
}

/// The statements `conn` has prepared whose text passes `filter` (an SQL condition on
/// `statement`), with how often each ran on a generic and on a custom plan.
async fn plan_uses(conn: &mut AsyncPgConnection, filter: &str) -> Vec<PlanUse> {
    diesel_async::RunQueryDsl::load(
        diesel::sql_query(format!(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements \
             WHERE {filter}"
        )),
        conn,
    )
    .await
    .unwrap()
}

/// Repositories on a pool of one connection, so every run of a test uses the same prepared
/// statements, and alice, a user of them.
async fn one_connection_with_alice(db: &TestDb) -> (deckhand_postgres::Pool, Repositories, User) {
    let pool = deckhand_postgres::connect(db.url(), 1).await.unwrap();
    let repos = deckhand_postgres::repositories(pool.clone());
    let alice = user("alice");
    repos.users.insert(&alice).await.unwrap();
    (pool, repos, alice)
}

/// A list page is planned once per connection, not on every run (docs/benchmarks.md). An
/// anonymous first page has no parameters at all (its game and limit are literals), so it is
/// one plain query planned with its very values; a signed-in first page binds its viewer and
/// settles on the prepared statement's generic plan. A name-filtered page of a date sort walks
/// the head of the list on a generic plan too; when the walk cannot fill it (a rare pattern), its
/// ids are picked by a statement planned on every run, its rows read by one on a generic plan,
/// and the short walk is not tried again.
#[tokio::test]
async fn first_list_pages_settle_on_a_generic_plan() {
    use deckhand_domain::decks::{DeckFilters, DeckQuery, DeckSort, PageRequest, SortOrder};

    let db = TestDb::new().await;
    let (pool, repos, alice) = one_connection_with_alice(&db).await;
    for n in 0..3 {
        repos
            .decks
            .insert(&deckhand_testkit::fixtures::deck(
                &alice,
                &format!("deck {n}"),
            ))
            .await
            .unwrap();
    }
    let named = |needle: &str| DeckFilters {
        name_contains: Some(needle.into()),
        ..DeckFilters::default()
    };
    for (sort, filters, viewer, shown) in [
        (DeckSort::EditedAt, DeckFilters::default(), None, 2),
        (DeckSort::Views, DeckFilters::default(), None, 2),
        (
            DeckSort::EditedAt,
            DeckFilters::default(),
            Some(alice.id),
            2,
        ),
        (DeckSort::EditedAt, named("deck"), None, 2),
        (DeckSort::EditedAt, named("deck 1"), None, 1),
    ] {
        let query = DeckQuery {
            with_summary: false,
            game: "mtg".into(),
            viewer,
            filters,
            sort,
            order: SortOrder::Desc,
            page: PageRequest { page: 1, limit: 2 },
        };
        for _ in 0..10 {
            let page = repos.decks.list(&query).await.unwrap();
            assert_eq!(page.items.len(), shown);
        }
    }
    let mut conn = pool.get().await.unwrap();
    let uses = plan_uses(
        &mut conn,
        "statement LIKE '%ORDER BY%' AND statement NOT LIKE '%count(%'",
    )
    .await;
    let texts: Vec<&str> = uses.iter().map(|used| used.statement.as_str()).collect();
    assert_eq!(uses.len(), 6, "one statement per shape: {texts:#?}");
    let settled = |used: &PlanUse, runs: i64| {
        assert!(
            used.generic_plans >= runs && used.custom_plans <= 10 - runs,
            "{} generic and {} custom plans for {}",
            used.generic_plans,
            used.custom_plans,
            used.statement
        );
    };
    let (walks, rest): (Vec<&PlanUse>, Vec<&PlanUse>) = uses
        .iter()
        .partition(|used| used.statement.contains("ILIKE (SELECT $"));
    let (named, rest): (Vec<&PlanUse>, Vec<&PlanUse>) = rest
        .into_iter()
        .partition(|used| used.statement.contains("ILIKE"));
    let (by_ids, rest): (Vec<&PlanUse>, Vec<&PlanUse>) = rest
        .into_iter()
        .partition(|used| used.statement.contains("d.id = ANY((SELECT $1"));
    let (signed_in, anonymous): (Vec<&PlanUse>, Vec<&PlanUse>) = rest
        .into_iter()
        .partition(|used| used.statement.starts_with("WITH page AS"));
    assert_eq!(
        (
            walks.len(),
            named.len(),
            by_ids.len(),
            signed_in.len(),
            anonymous.len()
        ),
        (1, 1, 1, 1, 2),
        "{texts:#?}"
    );
    for page in anonymous {
        assert!(!page.statement.contains('$'), "{}", page.statement);
        assert!(
            page.statement.contains("d.game = 'mtg'"),
            "{}",
            page.statement
        );
        assert!(page.statement.ends_with("LIMIT 2"), "{}", page.statement);
        settled(page, 10);
    }
    assert!(
        signed_in[0].statement.contains("LIMIT 2)"),
        "{}",
        signed_in[0].statement
    );
    settled(signed_in[0], 4);
    // Ten walks for "deck" that fill their page, and one for "deck 1" that comes up short: the
    // next nine of those go straight to the planned statements.
    let walk = walks[0];
    assert_eq!(
        walk.generic_plans + walk.custom_plans,
        11,
        "{}",
        walk.statement
    );
    settled(walk, 5);
    // The ids of a rare pattern's page: planned each run for its pattern, limit bound.
    assert!(
        named[0].statement.starts_with("SELECT d.id FROM"),
        "{}",
        named[0].statement
    );
    assert!(
        named[0].statement.contains("LIMIT $"),
        "{}",
        named[0].statement
    );
    assert_eq!(named[0].custom_plans, 10, "{}", named[0].statement);
    settled(by_ids[0], 4);
}

/// A name-filtered page whose matches lie beyond the decks its walk reads
/// ([`deckhand_postgres`]'s `WALK`, 2,000) is found by the planned statements: the walk
/// never cuts a page short.
#[tokio::test]
async fn a_name_filtered_page_finds_matches_beyond_the_walked_head_of_the_list() {
    use deckhand_domain::decks::{DeckFilters, DeckQuery, DeckSort, PageRequest, SortOrder};

    let (db, repos, alice) = schema_with_alice().await;
    let template = deck(&alice, "template");
    repos.decks.insert(&template).await.unwrap();
    // 2,075 copies of the template, each edited a second after the one before: the 5 oldest
    // and the 20 newest are needles, the 2,050 between them are not.
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    conn.batch_execute(
        "INSERT INTO decks SELECT (jsonb_populate_record(NULL::decks, to_jsonb(t) || \
         jsonb_build_object('id', gen_random_uuid(), 'name', CASE WHEN n <= 5 THEN 'old needle ' \
         WHEN n > 2055 THEN 'new needle ' ELSE 'hay ' END || n, 'updated_at', \
         t.updated_at + n * interval '1 second'))).* \
         FROM decks t, generate_series(1, 2075) AS n WHERE t.name = 'template'; \
         INSERT INTO deck_stats (deck_id, game) SELECT id, game FROM decks \
         WHERE name <> 'template'",
    )
    .await
    .unwrap();
    let page = |page| DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        filters: DeckFilters {
            name_contains: Some("NEEDLE".into()),
            ..DeckFilters::default()
        },
        viewer: None,
        sort: DeckSort::EditedAt,
        order: SortOrder::Desc,
        page: PageRequest { page, limit: 20 },
    };
    let names = |listed: &[deckhand_domain::decks::DeckListing]| {
        listed
            .iter()
            .map(|deck| deck.name.clone())
            .collect::<Vec<_>>()
    };
    let first = repos.decks.list(&page(1)).await.unwrap();
    let newest: Vec<String> = (2056..=2075)
        .rev()
        .map(|n| format!("new needle {n}"))
        .collect();
    assert_eq!(names(&first.items), newest);
    assert_eq!((first.total, first.total_exact), (25, true));
    let second = repos.decks.list(&page(2)).await.unwrap();
    let oldest: Vec<String> = (1..=5).rev().map(|n| format!("old needle {n}")).collect();
    assert_eq!(names(&second.items), oldest);
    assert_eq!((second.total, second.total_exact), (25, true));
}

/// A card-filtered page of a date sort goes where its cards make it cheapest, and every way
/// gives the same page: a page the head of the list holds (the first 2,000 decks, `WALK`) is
/// walked; one it does not is gathered from the card index when at most 2,000 decks hold the
/// cards (`GATHERED_AT_MOST`), else planned for its values, and a short walk is not tried again.
/// The walk and the gathering run on generic plans.
#[tokio::test]
async fn a_card_filtered_page_is_walked_gathered_or_planned_by_how_common_its_cards_are() {
    use deckhand_domain::decks::{DeckFilters, DeckQuery, DeckSort, PageRequest, SortOrder};

    let db = TestDb::new().await;
    let (pool, repos, alice) = one_connection_with_alice(&db).await;
    repos.decks.insert(&deck(&alice, "template")).await.unwrap();
    let [common, rare, between, old] = [(); 4].map(|()| Uuid::now_v7());
    // 4,100 copies of the template, deck n edited n seconds after it, so the walked head is n
    // 2101 to 4100. Their main decks hold: `common` when n is even; `rare` for n 1 to 3;
    // `between` for n 4061 to 4070 in the head and 11 to 20 past it; `old` for n 1 to 2050, none
    // in the head and more than a gathering reads. The save's trigger keeps `card_ids`.
    let line = "jsonb_build_object('card', jsonb_build_object('card_id', card, 'variant_id', card, \
                'name', 'Card', 'set', 's', 'collector_number', '1', 'type_line', 'Instant', \
                'colors', '[]'::jsonb), 'section', 'mainboard', 'quantity', 1, 'foil', false)";
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO decks SELECT (jsonb_populate_record(NULL::decks, to_jsonb(t) || \
         jsonb_build_object('id', gen_random_uuid(), 'name', 'deck ' || n, 'updated_at', \
         t.updated_at + n * interval '1 second', 'cards', \
         (SELECT coalesce(jsonb_agg({line}), '[]'::jsonb) FROM unnest(ARRAY[ \
            CASE WHEN n % 2 = 0 THEN '{common}'::uuid END, \
            CASE WHEN n <= 3 THEN '{rare}'::uuid END, \
            CASE WHEN n BETWEEN 4061 AND 4070 OR n BETWEEN 11 AND 20 THEN '{between}'::uuid END, \
            CASE WHEN n <= 2050 THEN '{old}'::uuid END \
         ]) AS card WHERE card IS NOT NULL)))).* \
         FROM decks t, generate_series(1, 4100) AS n WHERE t.name = 'template'; \
         INSERT INTO deck_stats (deck_id, game) SELECT id, game FROM decks \
         WHERE name <> 'template'"
    ))
    .await
    .unwrap();
    let page = |cards: Vec<Uuid>, exclude_cards: Vec<Uuid>| DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        filters: DeckFilters {
            cards,
            exclude_cards,
            ..DeckFilters::default()
        },
        viewer: None,
        sort: DeckSort::EditedAt,
        order: SortOrder::Desc,
        page: PageRequest { page: 1, limit: 20 },
    };
    let decks = |numbers: &mut dyn Iterator<Item = u32>| -> Vec<String> {
        numbers.map(|n| format!("deck {n}")).collect()
    };
    let cases = [
        (
            page(vec![common], vec![]),
            decks(&mut (4062..=4100).rev().step_by(2)),
            2050,
        ),
        (page(vec![rare], vec![]), decks(&mut (1..=3).rev()), 3),
        (
            page(vec![between], vec![]),
            decks(&mut (4061..=4070).rev().chain((11..=20).rev())),
            20,
        ),
        (
            page(vec![], vec![common]),
            decks(&mut (4061..=4099).rev().step_by(2)),
            // The odd ones and the template.
            2051,
        ),
        (
            page(vec![between, common], vec![]),
            decks(&mut [4070, 4068, 4066, 4064, 4062, 20, 18, 16, 14, 12].into_iter()),
            10,
        ),
        (
            page(vec![old], vec![]),
            decks(&mut (2031..=2050).rev()),
            2050,
        ),
    ];
    for (query, names, total) in &cases {
        for _ in 0..10 {
            let listed = repos.decks.list(query).await.unwrap();
            let listed_names: Vec<&str> = listed.items.iter().map(|d| d.name.as_str()).collect();
            assert_eq!(listed_names, *names, "{:?}", query.filters);
            assert_eq!(listed.total, *total, "{:?}", query.filters);
        }
    }

    let mut conn = pool.get().await.unwrap();
    let uses = plan_uses(
        &mut conn,
        "statement LIKE '%card_ids%' AND statement NOT LIKE '%count(*) AS matches%'",
    )
    .await;
    let texts: Vec<&str> = uses.iter().map(|used| used.statement.as_str()).collect();
    let runs = |shape: &dyn Fn(&str) -> bool| -> (i64, i64) {
        uses.iter()
            .filter(|used| shape(&used.statement))
            .fold((0, 0), |(generic, custom), used| {
                (generic + used.generic_plans, custom + used.custom_plans)
            })
    };
    // The common card's 10 pages, the exclusion's 10, and one walk each for the others (the
    // short walks are remembered): on generic plans but the first five of each statement.
    let (walk_generic, walk_custom) = runs(&|sql| {
        sql.contains(") AS w ON w.id = d.id WHERE bit_count((SELECT deck_card_bloom(")
            || sql.contains(") AS d WHERE NOT d.card_ids && (SELECT")
    });
    assert_eq!(walk_generic + walk_custom, 24, "{texts:#?}");
    assert!(walk_custom <= 10, "{walk_custom} custom plans: {texts:#?}");
    // 10 pages each of the rare card, the card in between and the pair, and the one gathering
    // of `old` that found more decks than it reads, on a generic plan but the first five.
    let (gathered_generic, gathered_custom) = runs(&|sql| sql.contains("AS MATERIALIZED"));
    assert_eq!(gathered_generic + gathered_custom, 31, "{texts:#?}");
    assert!(gathered_custom <= 5, "{texts:#?}");
    // `old`'s 10 pages by the statement planned for its card (whose generic plan, on a table
    // this small, may look as cheap).
    let (planned_generic, planned_custom) =
        runs(&|sql| sql.starts_with("SELECT d.id FROM decks d WHERE") && sql.contains("@> $"));
    assert_eq!(planned_generic + planned_custom, 10, "{texts:#?}");
}

/// A walked `cards=` page passes the walked decks through their card sieve (a Bloom filter of
/// each deck's counted cards, held in the list's index) and checks the cards of those it lets
/// through on their rows: a deck the sieve lets through without holding the card (a false
/// positive, as a deck of 300 cards has for more than half of all cards) is not listed.
#[tokio::test]
async fn a_deck_the_card_sieve_lets_through_is_listed_only_when_it_holds_the_cards() {
    use deckhand_domain::decks::{DeckFilters, DeckQuery, DeckSort, PageRequest, SortOrder};

    #[derive(QueryableByName)]
    struct Card {
        #[diesel(sql_type = diesel::sql_types::Uuid)]
        id: Uuid,
    }

    let db = TestDb::new().await;
    let (_pool, repos, alice) = one_connection_with_alice(&db).await;
    let holder = deck(&alice, "holder");
    repos.decks.insert(&holder).await.unwrap();
    repos.decks.insert(&deck(&alice, "crowded")).await.unwrap();
    let line = |card: &str| {
        format!(
            "json_build_object('card', json_build_object('card_id', {card}, 'variant_id', {card}, \
             'name', 'Card', 'set', 's', 'collector_number', '1', 'type_line', 'Instant', \
             'colors', '[]'::json), 'section', 'mainboard', 'quantity', 1, 'foil', false)"
        )
    };
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    // `crowded`, the more recently edited, holds 300 cards; the save's trigger keeps its sieve.
    conn.batch_execute(&format!(
        "UPDATE decks SET updated_at = updated_at + interval '1 hour', cards = \
         (SELECT json_agg({}) FROM generate_series(1, 300) AS n) WHERE name = 'crowded'",
        line("gen_random_uuid()")
    ))
    .await
    .unwrap();
    // A card `crowded` does not hold whose bits its sieve all has.
    let wanted: Card = diesel_async::RunQueryDsl::get_result(
        diesel::sql_query(
            "SELECT card AS id FROM (SELECT gen_random_uuid() AS card \
             FROM generate_series(1, 1000)) AS candidates, decks d \
             WHERE d.name = 'crowded' AND NOT d.card_ids @> ARRAY[card] \
             AND (d.card_bloom & deck_card_bloom(ARRAY[card])) = deck_card_bloom(ARRAY[card]) \
             LIMIT 1",
        ),
        &mut conn,
    )
    .await
    .unwrap();
    conn.batch_execute(&format!(
        "UPDATE decks SET cards = json_build_array({}) WHERE name = 'holder'",
        line(&format!("'{}'::uuid", wanted.id))
    ))
    .await
    .unwrap();

    // A page of one, which the walk fills: `crowded` first, let through by the sieve.
    let query = DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        filters: DeckFilters {
            cards: vec![wanted.id],
            ..DeckFilters::default()
        },
        viewer: None,
        sort: DeckSort::EditedAt,
        order: SortOrder::Desc,
        page: PageRequest { page: 1, limit: 1 },
    };
    let listed = repos.decks.list(&query).await.unwrap();
    let names: Vec<&str> = listed.items.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["holder"]);
    assert_eq!(listed.total, 1);
}

/// The resolution statements run prepared (`statement.rs`), so after five executions PostgreSQL
/// may keep one generic plan for every request, whatever its number of keys. On a catalog the
/// size of the 2019 import, that generic plan must be the same index probes the custom plans
/// use: no sequential scan, whether a request has 1 key or 1000.
#[tokio::test]
async fn resolution_statements_keep_index_plans_when_prepared() {
    let db = TestDb::new().await;
    let mut conn = db.pool().get().await.unwrap();
    conn.batch_execute(deckhand_testkit::fixtures::CATALOG_OF_2019_SIZE)
        .await
        .unwrap();
    // The arguments of each statement for `count` keys of every kind, as SQL literals.
    let array = |kind: &str, key: &dyn Fn(usize) -> String, count: usize| {
        let items: Vec<String> = (1..=count).map(key).collect();
        format!("'{{{}}}'::{kind}[]", items.join(","))
    };
    let printing = |n: usize| format!("00000000-0000-0000-0000-{n:012}");
    let card = |n: usize| format!("00000000-0000-0000-0001-{n:012}");
    let arguments = |count: usize| {
        [
            format!(
                "'mtg', {}, {}, {}, {}, {}, {}",
                array("uuid", &|n| printing(n * 7), count),
                array("text", &|n| (100_000 + n * 7).to_string(), count),
                array("text", &|n| (200_000 + n * 7).to_string(), count),
                array("text", &|n| (300_000 + n * 7).to_string(), count),
                array("text", &|n| format!("s{}", n * 11 % 300), count),
                array("text", &|n| (n * 11).to_string(), count),
            ),
            format!(
                "'mtg', {}",
                array("text", &|n| format!("\"card {}\"", n * 13), count)
            ),
            format!(
                "'mtg', {}, {}",
                array("uuid", &|n| card(n * 13 % 20_000 + 1), count),
                // Half the picks within a set, half not.
                array(
                    "text",
                    &|n| if n % 2 == 0 {
                        "NULL".to_owned()
                    } else {
                        format!("s{}", n % 300)
                    },
                    count
                ),
            ),
        ]
    };
    let expected: [&[&str]; 3] = [
        &[
            "catalog_printings_pkey",
            "catalog_printings_catalog_a_idx",
            "catalog_printings_catalog_b_idx",
            "catalog_printings_catalog_c_idx",
            "catalog_printings_set_number_idx",
            "catalog_cards_pkey",
        ],
        &[
            "catalog_cards_name_key_idx",
            "catalog_cards_front_face_key_idx",
        ],
        &["catalog_printings_preferred_idx", "catalog_cards_pkey"],
    ];
    for (index, ((name, types, sql), indexes)) in deckhand_postgres::RESOLUTION_STATEMENTS
        .iter()
        .zip(expected)
        .enumerate()
    {
        conn.batch_execute(&format!("PREPARE {name} ({types}) AS {sql}"))
            .await
            .unwrap();
        // What a connection runs after its fifth execution: one plan for any number of keys.
        conn.batch_execute("SET plan_cache_mode = force_generic_plan")
            .await
            .unwrap();
        for count in [1, 1000] {
            let plan: Vec<PlanLine> = diesel_async::RunQueryDsl::load(
                diesel::sql_query(format!(
                    "EXPLAIN EXECUTE {name} ({})",
                    arguments(count)[index]
                )),
                &mut conn,
            )
            .await
            .unwrap();
            let plan: Vec<String> = plan.into_iter().map(|line| line.line).collect();
            eprintln!("{name}, {count} keys:\n{}", plan.join("\n"));
            assert!(
                !plan.iter().any(|line| line.contains("Seq Scan")),
                "{name}: {plan:#?}"
            );
            for wanted in indexes {
                assert!(
                    plan.iter().any(|line| line.contains(wanted)),
                    "{name} does not use {wanted}: {plan:#?}"
                );
            }
        }
        // Left to choose, PostgreSQL does take the generic plan once it has seen five requests.
        conn.batch_execute("RESET plan_cache_mode").await.unwrap();
        for _ in 0..6 {
            conn.batch_execute(&format!("EXECUTE {name} ({})", arguments(1000)[index]))
                .await
                .unwrap();
        }
        let generic: Count = diesel_async::RunQueryDsl::get_result(
            diesel::sql_query(format!(
                "SELECT generic_plans AS count FROM pg_prepared_statements WHERE name = '{name}'"
            )),
            &mut conn,
        )
        .await
        .unwrap();
        assert!(generic.count >= 1, "{name} never ran its generic plan");
    }
}

/// A schema with alice and her PAT, its repositories, and a connection of the test's own.
async fn alices_pat() -> (TestDb, Repositories, PersonalAccessToken, AsyncPgConnection) {
    let (db, repos, owner) = schema_with_alice().await;
    let pat = pat_for(&owner);
    repos.pats.insert(&pat).await.unwrap();
    let other = AsyncPgConnection::establish(db.url()).await.unwrap();
    (db, repos, pat, other)
}

/// Proves that `repos` answers `token`'s lookup from its copy: a change made with the triggers
/// switched off (unseen by any listener) is not seen. Undoes the change before it returns,
/// leaving the copy holding the token. The copy is kept only once the listener has connected
/// (and another test's change to its own users drops it), so it tries for a few seconds.
async fn assert_kept_in_process(
    repos: &Repositories,
    other: &mut AsyncPgConnection,
    hash: &TokenHash,
) {
    let hidden = |sql: &str| {
        format!(
            "SET session_replication_role = replica; {sql}; SET session_replication_role = origin"
        )
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (pat, _) = repos.pats.find_by_hash(hash).await.unwrap().unwrap();
        assert_eq!(pat.revoked_at, None);
        other
            .batch_execute(&hidden(
                "UPDATE personal_access_tokens SET revoked_at = now()",
            ))
            .await
            .unwrap();
        let (seen, _) = repos.pats.find_by_hash(hash).await.unwrap().unwrap();
        if seen.revoked_at.is_none() {
            other
                .batch_execute(&hidden(
                    "UPDATE personal_access_tokens SET revoked_at = NULL",
                ))
                .await
                .unwrap();
            return;
        }
        // Read from the database, and maybe kept: undone where the listener hears it.
        other
            .batch_execute("UPDATE personal_access_tokens SET revoked_at = NULL")
            .await
            .unwrap();
        eventually_found(repos, hash, |pat, _| pat.revoked_at.is_none()).await;
        assert!(
            Instant::now() < deadline,
            "the token was never kept in process"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Looks `hash` up until `done` holds of what is found, for at most 5 s.
async fn eventually_found(
    repos: &Repositories,
    hash: &TokenHash,
    done: impl Fn(&PersonalAccessToken, &User) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (pat, user) = repos.pats.find_by_hash(hash).await.unwrap().unwrap();
        if done(&pat, &user) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the change never reached the lookup: {pat:?} {user:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A PAT lookup is answered in process once made, and any committed change to tokens or users,
/// by another instance, the admin CLI or plain SQL, reaches it through the
/// `deckhand_credentials` notification: a revoked token or a deactivated user stops working.
#[tokio::test]
async fn a_kept_pat_follows_changes_made_anywhere() {
    let (_db, repos, pat, mut other) = alices_pat().await;

    assert_kept_in_process(&repos, &mut other, &pat.token_hash).await;
    other
        .batch_execute("UPDATE personal_access_tokens SET revoked_at = now()")
        .await
        .unwrap();
    eventually_found(&repos, &pat.token_hash, |pat, _| pat.revoked_at.is_some()).await;

    other
        .batch_execute("UPDATE personal_access_tokens SET revoked_at = NULL")
        .await
        .unwrap();
    eventually_found(&repos, &pat.token_hash, |pat, _| pat.revoked_at.is_none()).await;
    assert_kept_in_process(&repos, &mut other, &pat.token_hash).await;
    other
        .batch_execute("UPDATE users SET active = false")
        .await
        .unwrap();
    eventually_found(&repos, &pat.token_hash, |_, user| !user.active).await;
}

/// Every copy one set of repositories holds (the catalog, the kept tokens, the events' news and
/// the webhook worker's wake-ups) hears of changes on one connection: PostgreSQL signals every
/// listening backend of the database at each commit that notifies, whatever its channels, so
/// each listening connection more costs every write (docs/benchmarks.md, "One listening
/// connection").
#[tokio::test]
async fn a_set_of_repositories_listens_on_one_connection() {
    let (db, repos, pat, mut other) = alices_pat().await;
    assert_kept_in_process(&repos, &mut other, &pat.token_hash).await;
    // The catalog's copy subscribes last, at its first read: its LISTEN is the last one sent.
    mainboard_label(&repos).await;
    let listening = |last: &'static str| {
        diesel::sql_query(
            "SELECT count(*) FILTER (WHERE query LIKE 'LISTEN %') AS count, \
                 count(*) FILTER (WHERE query = $2) AS last \
             FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind::<Text, _>(db.schema().to_owned())
        .bind::<Text, _>(last)
    };
    #[derive(QueryableByName)]
    struct Listening {
        #[diesel(sql_type = BigInt)]
        count: i64,
        #[diesel(sql_type = BigInt)]
        last: i64,
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen: Listening =
            diesel_async::RunQueryDsl::get_result(listening("LISTEN deckhand_catalog"), &mut other)
                .await
                .unwrap();
        if seen.last == 1 {
            assert_eq!(seen.count, 1, "one listening connection for every channel");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the catalog's channel was never listened on"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Each copy still hears its own channel on it.
    other
        .batch_execute("UPDATE personal_access_tokens SET revoked_at = now()")
        .await
        .unwrap();
    eventually_found(&repos, &pat.token_hash, |pat, _| pat.revoked_at.is_some()).await;
}

/// A user deactivated through this instance is seen by its very next lookup.
#[tokio::test]
async fn a_user_deactivated_here_drops_the_kept_pats_at_once() {
    let (_db, repos, pat, mut other) = alices_pat().await;
    // Only this instance's own drop can reach the next lookup in time.
    other
        .batch_execute("ALTER TABLE users DISABLE TRIGGER users_changed")
        .await
        .unwrap();
    assert_kept_in_process(&repos, &mut other, &pat.token_hash).await;

    repos.users.set_active(pat.user_id, false).await.unwrap();
    let (_, found) = repos
        .pats
        .find_by_hash(&pat.token_hash)
        .await
        .unwrap()
        .unwrap();
    assert!(!found.active);
}

/// Two instances on one database (each with its own pool and its own remembered counts) never
/// disagree on a list total once a write is acknowledged: whichever instance writes, the other's
/// very next page counts it, for creates, visibility changes and archives (a deck leaving the
/// list) alike. Every page is full, so each total is a remembered count, never one read off a
/// last page.
#[tokio::test]
async fn a_write_acknowledged_on_one_instance_is_in_the_next_total_of_another() {
    use deckhand_domain::decks::{
        Deck, DeckFilters, DeckQuery, DeckSort, HistoryType, PageRequest, SortOrder, Visibility,
    };
    use deckhand_testkit::fixtures::revision_of;

    let (db, first, alice) = schema_with_alice().await;
    let second =
        deckhand_postgres::repositories(deckhand_postgres::connect(db.url(), 2).await.unwrap());
    let instances = [&first, &second];
    let page = DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        filters: DeckFilters::default(),
        viewer: None,
        sort: DeckSort::CreatedAt,
        order: SortOrder::Desc,
        page: PageRequest { page: 1, limit: 1 },
    };
    let total = async |repos: &Repositories| {
        let listed = repos.decks.list(&page).await.unwrap();
        assert_eq!(
            listed.items.len(),
            1,
            "a full page, so the total is counted"
        );
        listed.total
    };
    for seed in 0..2 {
        first
            .decks
            .insert(&deck(&alice, &format!("seed {seed}")))
            .await
            .unwrap();
    }
    let mut expected = 2;
    for round in 0..40 {
        // Both orders: even rounds write on the first instance, odd ones on the second.
        let (writer, reader) = (instances[round % 2], instances[(round + 1) % 2]);
        // Both remember the current total before the write.
        assert_eq!(total(writer).await, expected, "round {round}, before");
        assert_eq!(total(reader).await, expected, "round {round}, before");

        let new = deck(&alice, &format!("round {round}"));
        writer.decks.insert(&new).await.unwrap();
        expected += 1;
        assert_eq!(total(reader).await, expected, "round {round}: created");
        assert_eq!(total(writer).await, expected, "round {round}: created");

        let (change, leaves): (fn(&Deck) -> _, _) = match round % 3 {
            0 => (
                |deck: &Deck| {
                    let mut content = deck.content.clone();
                    content.visibility = Visibility::Private;
                    revision_of(deck, content, HistoryType::Update, now())
                },
                true,
            ),
            1 => (
                |deck: &Deck| {
                    let mut revision =
                        revision_of(deck, deck.content.clone(), HistoryType::Update, now());
                    revision.is_archived = true;
                    revision
                },
                true,
            ),
            _ => (
                |deck: &Deck| revision_of(deck, deck.content.clone(), HistoryType::Update, now()),
                false,
            ),
        };
        // The other instance changes it, so the writer reads a count the reader moved.
        reader
            .decks
            .revise(new.id, Box::new(move |deck: &Deck| Ok(change(deck))))
            .await
            .unwrap();
        if leaves {
            expected -= 1;
        }
        assert_eq!(total(writer).await, expected, "round {round}: changed");
        assert_eq!(total(reader).await, expected, "round {round}: changed");
    }
}

/// The guide list's totals agree across instances as the decks' do: whichever instance writes,
/// the other's very next page counts a created guide, a deck attached to one (the `deckId`
/// filter), a matchup added (the `opponentArchetype` filter) and an archive (the guide leaving
/// all three). Every page is full, so each total is a remembered count.
#[tokio::test]
async fn a_guide_write_acknowledged_on_one_instance_is_in_the_next_total_of_another() {
    use deckhand_domain::decks::{PageRequest, SortOrder};
    use deckhand_domain::events::EventType;
    use deckhand_domain::sideboards::{GuideFilters, GuideQuery, GuideSort};
    use deckhand_testkit::fixtures::{change, guide, guide_archived, matchup};

    let (db, first, alice) = schema_with_alice().await;
    let second =
        deckhand_postgres::repositories(deckhand_postgres::connect(db.url(), 2).await.unwrap());
    let instances = [&first, &second];
    let primary = deck(&alice, "primary");
    let attached = deck(&alice, "attached");
    for new in [&primary, &attached] {
        first.decks.insert(new).await.unwrap();
    }
    let query = |filters: GuideFilters| GuideQuery {
        game: "mtg".into(),
        viewer: alice.id,
        filters,
        sort: GuideSort::CreatedAt,
        order: SortOrder::Desc,
        page: PageRequest { page: 1, limit: 1 },
        with_summary: false,
    };
    let lists = [
        query(GuideFilters::default()),
        query(GuideFilters {
            deck: Some(attached.id),
            ..GuideFilters::default()
        }),
        query(GuideFilters {
            opponent_archetype_contains: Some("burn".into()),
            ..GuideFilters::default()
        }),
    ];
    let totals = async |repos: &Repositories| {
        let mut totals = Vec::new();
        for list in &lists {
            let page = repos.sideboard_guides.list(list).await.unwrap();
            assert_eq!(page.items.len(), 1, "a full page, so the total is counted");
            totals.push(page.total);
        }
        totals
    };
    let add_to_every_list = async |repos: &Repositories, name: &str| {
        let new = guide(&alice, primary.id, name);
        repos.sideboard_guides.insert(&new).await.unwrap();
        new.id
    };
    let seeded = add_to_every_list(&first, "seed").await;
    first
        .sideboard_guides
        .attach(
            seeded,
            attached.id,
            &change(EventType::GuideDeckAttached, now()),
        )
        .await
        .unwrap();
    first
        .sideboard_guides
        .add_matchup(
            seeded,
            &matchup("Mono-Red", Some("Burn"), 0),
            &change(EventType::GuideMatchupCreated, now()),
        )
        .await
        .unwrap();
    let mut expected = vec![1, 1, 1];
    for round in 0..8 {
        // Both orders, and every write read first by the instance that did not make it.
        let (writer, reader) = (instances[round % 2], instances[(round + 1) % 2]);
        assert_eq!(totals(writer).await, expected, "round {round}, before");
        assert_eq!(totals(reader).await, expected, "round {round}, before");

        let id = add_to_every_list(writer, &format!("round {round}")).await;
        expected[0] += 1;
        assert_eq!(totals(reader).await, expected, "round {round}: created");
        assert_eq!(totals(writer).await, expected, "round {round}: created");

        reader
            .sideboard_guides
            .attach(
                id,
                attached.id,
                &change(EventType::GuideDeckAttached, now()),
            )
            .await
            .unwrap();
        expected[1] += 1;
        assert_eq!(totals(writer).await, expected, "round {round}: attached");
        assert_eq!(totals(reader).await, expected, "round {round}: attached");

        writer
            .sideboard_guides
            .add_matchup(
                id,
                &matchup("Boros", Some("Burn"), 0),
                &change(EventType::GuideMatchupCreated, now()),
            )
            .await
            .unwrap();
        expected[2] += 1;
        assert_eq!(totals(reader).await, expected, "round {round}: matchup");
        assert_eq!(totals(writer).await, expected, "round {round}: matchup");

        reader
            .sideboard_guides
            .revise(id, guide_archived(true, now()))
            .await
            .unwrap();
        for total in &mut expected {
            *total -= 1;
        }
        assert_eq!(totals(writer).await, expected, "round {round}: archived");
        assert_eq!(totals(reader).await, expected, "round {round}: archived");
    }
}

/// Through a transaction-mode pooler nothing is SET on a session, so the statement timeout is
/// the server's own: a pool whose timeout differs refuses its connections, naming both values
/// and the fix, rather than run without the limit it was given; one that matches works.
#[tokio::test]
async fn through_a_pooler_a_connection_checks_the_servers_statement_timeout() {
    use deckhand_postgres::{Pooler, connect_through};
    use deckhand_testkit::db::OwnCluster;

    let cluster = OwnCluster::start("pooler-timeout").expect("a cluster of our own");
    let mut admin = AsyncPgConnection::establish(&cluster.url()).await.unwrap();
    admin
        .batch_execute("ALTER ROLE postgres SET statement_timeout = 15000")
        .await
        .unwrap();
    let bouncer = cluster.pgbouncer(1).expect("PgBouncer in front of it");

    let mismatched = connect_through(
        &bouncer.url(),
        1,
        Duration::from_millis(5_000),
        Pooler::Transaction,
    )
    .await
    .unwrap();
    let refused = mismatched
        .get()
        .await
        .err()
        .expect("a refused connection")
        .to_string();
    assert!(
        refused.contains("statement_timeout is 15000 ms, not the 5000 ms")
            && refused.contains("ALTER ROLE"),
        "{refused}"
    );

    let matching = connect_through(
        &bouncer.url(),
        1,
        Duration::from_millis(15_000),
        Pooler::Transaction,
    )
    .await
    .unwrap();
    deckhand_postgres::run_migrations(&cluster.url())
        .await
        .unwrap();
    let direct = deckhand_postgres::connect(&cluster.url(), 1).await.unwrap();
    let repos = deckhand_postgres::repositories_listening_on(matching, direct);
    let alice = user("alice");
    repos.users.insert(&alice).await.unwrap();
    assert_eq!(
        repos
            .users
            .find_by_id(alice.id)
            .await
            .unwrap()
            .map(|found| found.id),
        Some(alice.id)
    );
}

/// An endpoint deleted while an attempt of its delivery is being recorded (the delivery's row
/// locked, the endpoint's next, as `record` takes them) waits for the record and is deleted:
/// deleting the endpoint first and its deliveries through the cascade took the two locks the
/// other way round, and PostgreSQL ended one of the two with "deadlock detected" (a 500 found
/// by `cargo xtask fuzz`).
#[tokio::test]
async fn an_endpoint_deleted_while_an_attempt_is_recorded_waits_for_it_without_a_deadlock() {
    use deckhand_testkit::fixtures::{partner_for, webhook_endpoint};

    let (db, repos, alice) = schema_with_alice().await;
    let partner = partner_for(&alice, "acme");
    repos.partners.insert(&partner).await.unwrap();
    let endpoint = webhook_endpoint(&partner, "https://hooks.example.com/a");
    repos.webhooks.create(&endpoint).await.unwrap();
    repos
        .decks
        .insert(&deck(&alice, "Delivered"))
        .await
        .unwrap();
    assert_eq!(repos.webhooks.fan_out(10, now()).await.unwrap(), 1);

    // What `record` does first: the delivery's row, locked until its transaction ends.
    let mut recorder = AsyncPgConnection::establish(db.url()).await.unwrap();
    recorder
        .batch_execute(&format!(
            "BEGIN; UPDATE webhook_deliveries SET attempt = attempt WHERE endpoint_id = '{}'",
            endpoint.id.0
        ))
        .await
        .unwrap();
    let deleting = tokio::spawn({
        let repos = repos.clone();
        async move { repos.webhooks.delete("acme", endpoint.id).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!deleting.is_finished(), "the delete waits for the record");
    // Then the endpoint's row, and the end of the record.
    recorder
        .batch_execute(&format!(
            "SET lock_timeout = '5s'; \
             SELECT 1 FROM webhook_endpoints WHERE id = '{}' FOR UPDATE; COMMIT",
            endpoint.id.0
        ))
        .await
        .expect("the record takes the endpoint's lock and ends");
    assert!(deleting.await.unwrap().expect("the delete succeeds"));
    assert_eq!(
        repos.webhooks.find("acme", endpoint.id).await.unwrap(),
        None
    );
    assert_eq!(
        texts(&db, "SELECT id::text AS value FROM webhook_deliveries").await,
        Vec::<String>::new()
    );
}

/// Two instances on one database (two pools, each with its workers) claim one queue at once,
/// one endpoint flooded: no delivery is claimed twice, and no endpoint ever has more than two
/// in flight, though each instance counts the room on its own (contract "Webhooks", fair
/// share; the endpoint's row lock makes claims of one endpoint one after the other).
#[tokio::test]
async fn two_instances_claiming_at_once_take_each_delivery_once_and_two_per_endpoint_at_most() {
    let db = TestDb::new().await;
    let other =
        deckhand_postgres::repositories(deckhand_postgres::connect(db.url(), 4).await.unwrap());
    let claimed =
        deckhand_testkit::webhook_workers::flood_and_claim(&[db.repositories(), other], 6)
            .await
            .unwrap();
    assert_eq!(claimed.deliveries, 60 + 5 * 30, "{claimed:?}");
    assert!(claimed.most_in_flight <= 2, "{claimed:?}");
}

/// A claim waits for no lock: an endpoint whose row another transaction holds (an attempt of
/// it being recorded) and a delivery whose row is held (being deleted) are passed by, and
/// taken by the next claim once free. Waiting there could close a cycle with `record`, which
/// holds a delivery and waits for its endpoint.
#[tokio::test]
async fn a_claim_passes_locked_endpoints_and_deliveries_by_without_waiting() {
    use deckhand_testkit::fixtures::{partner_for, webhook_endpoint};

    let (db, repos, alice) = schema_with_alice().await;
    let partner = partner_for(&alice, "acme");
    repos.partners.insert(&partner).await.unwrap();
    let endpoint = webhook_endpoint(&partner, "https://hooks.example.com/a");
    repos.webhooks.create(&endpoint).await.unwrap();
    for name in ["one", "two"] {
        repos.decks.insert(&deck(&alice, name)).await.unwrap();
    }
    let at = now();
    assert_eq!(repos.webhooks.fan_out(10, at).await.unwrap(), 2);
    let ids = texts(
        &db,
        "SELECT id::text AS value FROM webhook_deliveries ORDER BY id",
    )
    .await;
    let lease = Duration::from_secs(60);
    let claim = async || {
        let started = Instant::now();
        let claimed =
            tokio::time::timeout(Duration::from_secs(5), repos.webhooks.claim(at, 10, lease))
                .await
                .expect("the claim waits for no lock")
                .unwrap();
        assert!(started.elapsed() < Duration::from_secs(2));
        let mut taken: Vec<String> = claimed
            .iter()
            .map(|claimed| claimed.delivery.id.0.to_string())
            .collect();
        taken.sort();
        taken
    };

    let mut holder = AsyncPgConnection::establish(db.url()).await.unwrap();
    holder
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM webhook_endpoints WHERE id = '{}' FOR UPDATE",
            endpoint.id.0
        ))
        .await
        .unwrap();
    assert_eq!(claim().await, Vec::<String>::new());
    holder
        .batch_execute(&format!(
            "ROLLBACK; BEGIN; SELECT 1 FROM webhook_deliveries WHERE id = '{}' FOR UPDATE",
            ids[0]
        ))
        .await
        .unwrap();
    assert_eq!(claim().await, [ids[1].clone()]);
    holder.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(claim().await, [ids[0].clone()]);
}

/// A pooled connection whose session the server ended under a statement (`pg_terminate_backend`,
/// SQLSTATE 57P01, as a restart or a crash of another backend does with 57P01 and 57P02) is
/// never handed out again: that statement's caller is told the store is unavailable, and the
/// very next checkout, before the client may have seen the socket close, gets a working
/// connection rather than a second error.
#[tokio::test]
async fn a_connection_whose_session_was_ended_is_not_handed_out_again() {
    use deckhand_testkit::db::direct::{backend_pid, connect, select_json, sessions_waiting_on};

    let (db, _, alice) = schema_with_alice().await;
    // One connection: the next checkout gets that one again, or a new one.
    let listen = deckhand_postgres::connect(db.url(), 4).await.unwrap();
    let repos = deckhand_postgres::repositories_listening_on(
        deckhand_postgres::connect(db.url(), 1).await.unwrap(),
        listen,
    );
    assert_eq!(
        repos.users.find_by_id(alice.id).await.unwrap(),
        Some(alice.clone())
    );
    for round in 0..5 {
        let mut blocker = connect(db.url()).await;
        let blocker_pid = backend_pid(&mut blocker).await;
        blocker
            .batch_execute("BEGIN; LOCK TABLE users IN ACCESS EXCLUSIVE MODE")
            .await
            .unwrap();
        let waiting = tokio::spawn({
            let repos = repos.clone();
            async move { repos.users.find_by_id(alice.id).await }
        });
        let mut killer = connect(db.url()).await;
        let pids = sessions_waiting_on(&mut killer, blocker_pid, Duration::from_secs(10)).await;
        let ended = select_json(
            &mut killer,
            &format!(
                "SELECT json_agg(pg_terminate_backend(pid))::text AS json \
                 FROM unnest(ARRAY{pids:?}::int[]) AS pid"
            ),
        )
        .await
        .unwrap();
        assert_eq!(ended, serde_json::json!([true]), "round {round}");
        let error = waiting.await.unwrap().unwrap_err();
        assert!(is_store_unavailable(&error), "round {round}: {error:?}");
        blocker.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(
            repos.users.find_by_id(alice.id).await.unwrap(),
            Some(alice.clone()),
            "round {round}"
        );
    }
}
