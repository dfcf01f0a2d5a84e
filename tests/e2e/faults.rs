//! Faults with nothing lost: PostgreSQL restarted under running writers, and a connection ended
//! in the middle of a PATCH's transaction. Every write the API acknowledged is there afterwards;
//! one it did not acknowledge is absent or whole (never half a deck, never a version without
//! its history record); failures are 503s in the envelope; the server recovers by itself.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::direct::{backend_pid, connect, select_json, sessions_waiting_on};
use deckhand_testkit::db::{OwnCluster, TestDb};
use diesel_async::SimpleAsyncConnection as _;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, send};

const SCOPES: &str = "decks:read decks:write";
const CREATORS: usize = 3;
const EDITORS: usize = 3;

/// No request may take longer: the pool gives up on a dead server well before.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap()
}

/// What one writer sent and what it was told.
#[derive(Default)]
struct Ledger {
    /// Deck name -> id, for creates answered 201.
    created: BTreeMap<String, String>,
    /// Names of creates answered otherwise.
    unacknowledged_creates: BTreeSet<String>,
    /// (deck id, version) -> name, for PATCHes answered 200.
    revised: BTreeMap<(String, i64), String>,
    unacknowledged_patches: usize,
    /// Every refusal seen: each must be a 503 in the envelope.
    refusals: Vec<(StatusCode, Value)>,
}

impl Ledger {
    fn merge(&mut self, other: Self) {
        self.created.extend(other.created);
        self.unacknowledged_creates
            .extend(other.unacknowledged_creates);
        self.revised.extend(other.revised);
        self.unacknowledged_patches += other.unacknowledged_patches;
        self.refusals.extend(other.refusals);
    }
}

/// A response's status and JSON body, or `None` when no answer came (a timeout).
async fn answer(request: reqwest::RequestBuilder) -> Option<(StatusCode, Value)> {
    let response = request.send().await.ok()?;
    let status = response.status();
    let body = response.json().await.unwrap_or(Value::Null);
    Some((status, body))
}

/// Creates decks named `c<writer>-<n>` until `stop`.
async fn creator(app: Arc<TestApp>, token: String, writer: usize, stop: Arc<AtomicBool>) -> Ledger {
    let client = client();
    let mut ledger = Ledger::default();
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let name = format!("c{writer}-{n}");
        let request = client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(
                &json!({"name": name, "visibility": ["public"], "notes": "written under faults"}),
            );
        match answer(request).await {
            Some((StatusCode::CREATED, body)) => {
                let id = body["id"].as_str().unwrap().to_owned();
                ledger.created.insert(name, id);
            }
            other => {
                ledger.unacknowledged_creates.insert(name);
                ledger.refusals.extend(other);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    ledger
}

/// Renames deck `id` to `p<writer>-<n>` until `stop`.
async fn editor(
    app: Arc<TestApp>,
    token: String,
    writer: usize,
    id: String,
    stop: Arc<AtomicBool>,
) -> Ledger {
    let client = client();
    let mut ledger = Ledger::default();
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let name = format!("p{writer}-{n}");
        let request = client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&token)
            .json(&json!({"name": name}));
        match answer(request).await {
            Some((StatusCode::OK, body)) => {
                let version = body["version"].as_i64().unwrap();
                ledger.revised.insert((id.clone(), version), name);
            }
            other => {
                ledger.unacknowledged_patches += 1;
                ledger.refusals.extend(other);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    ledger
}

/// Creates a public deck named `name` and returns its id.
async fn create_deck(app: &TestApp, token: &str, name: &str) -> String {
    let (status, _, body) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(token)
            .json(&json!({"name": name, "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_str().unwrap().to_owned()
}

/// (version number, history type, name at that version) of each history record of deck `id`.
async fn history(app: &TestApp, id: &str) -> Vec<(i64, String, String)> {
    let (status, _, versions) = send(
        app.client
            .get(app.api(&format!("/games/mtg/decks/{id}/versions"))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version_number"].as_i64().unwrap(),
                v["history_type"].as_str().unwrap().to_owned(),
                v["name_at_version"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Every deck in the database, whole: its history is exactly versions 1..=version, the first a
/// create and the last carrying the deck's content, and its counters row exists. Returns
/// `{name: version}` of every deck.
async fn assert_every_deck_whole(url: &str) -> BTreeMap<String, i64> {
    let mut conn = connect(url).await;
    let decks = select_json(
        &mut conn,
        "SELECT coalesce(json_agg(json_build_object(
             'name', d.name,
             'version', d.version,
             'versions', (SELECT count(*) FROM deck_versions v WHERE v.deck_id = d.id),
             'newest', (SELECT max(version_number) FROM deck_versions v WHERE v.deck_id = d.id),
             'first', (SELECT history_type FROM deck_versions v
                       WHERE v.deck_id = d.id AND v.version_number = 1),
             'content_matches', (SELECT v.summary::jsonb = d.summary::jsonb FROM deck_versions v
                                 WHERE v.deck_id = d.id AND v.version_number = d.version),
             'counters', EXISTS (SELECT 1 FROM deck_stats s WHERE s.deck_id = d.id)
         )), '[]')::text AS json
         FROM decks d",
    )
    .await
    .unwrap();
    decks
        .as_array()
        .unwrap()
        .iter()
        .map(|deck| {
            assert_eq!(deck["versions"], deck["version"], "{deck}");
            assert_eq!(deck["newest"], deck["version"], "{deck}");
            assert_eq!(deck["first"], "create", "{deck}");
            assert_eq!(deck["content_matches"], true, "{deck}");
            assert_eq!(deck["counters"], true, "{deck}");
            (
                deck["name"].as_str().unwrap().to_owned(),
                deck["version"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_acknowledged_across_a_database_restart_are_all_kept() {
    let cluster = OwnCluster::start("faults").expect("a cluster of our own");
    let app = Arc::new(
        TestApp::builder(Store::PostgresAt(cluster.url()))
            .rate_limits(None)
            .start()
            .await,
    );
    let (_, token) = app.user_with_token("writer", SCOPES).await;
    let mut edited = Vec::new();
    for writer in 0..EDITORS {
        edited.push(create_deck(&app, &token, &format!("edited-{writer}")).await);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for writer in 0..CREATORS {
        writers.push(tokio::spawn(creator(
            app.clone(),
            token.clone(),
            writer,
            stop.clone(),
        )));
    }
    for (writer, id) in edited.iter().enumerate() {
        writers.push(tokio::spawn(editor(
            app.clone(),
            token.clone(),
            writer,
            id.clone(),
            stop.clone(),
        )));
    }

    tokio::time::sleep(Duration::from_secs(1)).await;
    let stopping = Instant::now();
    // pg_ctl blocks: the writers and the server go on on the other worker thread meanwhile.
    tokio::task::block_in_place(|| cluster.stop()).expect("stop PostgreSQL");
    let stop_took = stopping.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    tokio::task::block_in_place(|| cluster.restart()).expect("start PostgreSQL again");
    let restarted = Instant::now();

    // Recovered: a write is acknowledged again, without restarting the server.
    let recovery = loop {
        let request = app
            .client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&token)
            .json(&json!({"name": "after the restart", "visibility": ["public"]}));
        if let Some((StatusCode::CREATED, _)) = answer(request).await {
            break restarted.elapsed();
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(30),
            "never recovered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let mut ledger = Ledger::default();
    for writer in writers {
        ledger.merge(writer.await.unwrap());
    }

    for (status, body) in &ledger.refusals {
        assert_eq!(*status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_envelope(body, "SERVICE_UNAVAILABLE");
    }
    assert!(
        !ledger.refusals.is_empty(),
        "the outage refused no write: the test tested nothing"
    );
    assert!(ledger.created.len() > 10 && ledger.revised.len() > 10);

    // Every acknowledged create is there, with its one history record.
    for (name, id) in &ledger.created {
        assert_eq!(
            history(&app, id).await,
            [(1, "create".to_owned(), name.clone())]
        );
    }
    // Every acknowledged PATCH is in its deck's history, under the version it was told.
    let mut histories = BTreeMap::new();
    for id in &edited {
        histories.insert(id.clone(), history(&app, id).await);
    }
    for ((id, version), name) in &ledger.revised {
        let record = &histories[id][usize::try_from(*version - 1).unwrap()];
        assert_eq!(record, &(*version, "update".to_owned(), name.clone()));
    }
    // Nothing is half there; an unacknowledged create is absent or whole.
    let stored = assert_every_deck_whole(&cluster.url()).await;
    let committed_unacknowledged = ledger
        .unacknowledged_creates
        .iter()
        .filter(|name| stored.contains_key(*name))
        .count();
    for name in stored.keys() {
        assert!(
            ledger.created.contains_key(name)
                || ledger.unacknowledged_creates.contains(name)
                || name.starts_with("edited-")
                || name.starts_with("p")
                || name == "after the restart",
            "a deck nobody asked for: {name}"
        );
    }
    let patches = ledger.revised.len() + ledger.unacknowledged_patches;
    let stored_revisions: i64 = edited
        .iter()
        .map(|id| i64::try_from(histories[id].len()).unwrap() - 1)
        .sum();
    eprintln!(
        "faults: restart under writers: creates {} attempted, {} acknowledged (all verified), \
         {} unacknowledged of which {} committed whole; PATCHes {} attempted, {} acknowledged \
         (all verified), {} stored; {} refusals, all 503; PostgreSQL stop took {:?}; first \
         acknowledged write {:?} after PostgreSQL started again",
        ledger.created.len() + ledger.unacknowledged_creates.len(),
        ledger.created.len(),
        ledger.unacknowledged_creates.len(),
        committed_unacknowledged,
        patches,
        ledger.revised.len(),
        stored_revisions,
        ledger.refusals.len(),
        stop_took,
        recovery,
    );
}

#[tokio::test]
async fn a_patch_whose_connection_is_ended_mid_transaction_fails_cleanly_and_a_retry_works() {
    let db = TestDb::new().await;
    let app = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .start()
        .await;
    let (_, token) = app.user_with_token("killed", SCOPES).await;
    let id = create_deck(&app, &token, "Before").await;

    // A transaction of our own takes the key of version 2 first: the PATCH updates the deck row,
    // then waits on that key to write its history record, in the middle of its transaction.
    let mut blocker = connect(db.url()).await;
    let blocker_pid = backend_pid(&mut blocker).await;
    blocker
        .batch_execute(&format!(
            "BEGIN; INSERT INTO deck_versions \
             (deck_id, version_number, history_type, content, summary, edited_at) \
             SELECT deck_id, 2, 'update', content, summary, now() FROM deck_versions \
             WHERE deck_id = '{id}' AND version_number = 1"
        ))
        .await
        .unwrap();
    let patch = {
        let request = app
            .client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&token)
            .json(&json!({"name": "Lost"}));
        tokio::spawn(async move { send(request).await })
    };

    end_the_session_waiting_on(db.url(), blocker_pid).await;

    let (status, headers, body) = patch.await.unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert!(headers.contains_key("retry-after"));

    blocker.batch_execute("ROLLBACK").await.unwrap();
    // Nothing of the PATCH stayed: the deck is at version 1 with its one record.
    assert_eq!(
        history(&app, &id).await,
        [(1, "create".to_owned(), "Before".to_owned())]
    );
    let (_, headers, deck) = send(app.client.get(app.api(&format!("/games/mtg/decks/{id}")))).await;
    assert_eq!(
        (headers["etag"].to_str().unwrap(), &deck["name"]),
        ("\"1\"", &json!("Before"))
    );
    assert_every_deck_whole(db.url()).await;

    let (status, _, body) = send(
        app.client
            .patch(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&token)
            .json(&json!({"name": "Retried"})),
    )
    .await;
    assert_eq!(
        (status, &body["version"]),
        (StatusCode::OK, &json!(2)),
        "{body}"
    );
    assert_eq!(
        history(&app, &id).await,
        [
            (1, "create".to_owned(), "Before".to_owned()),
            (2, "update".to_owned(), "Retried".to_owned())
        ]
    );
}

/// Timeouts are outages, not bugs (contract §7): a read held up by a lock until the statement
/// timeout cuts it, and a read whose connection is ended while it waits, are both 503 with
/// `Retry-After`, never 500; with the lock gone the same read succeeds.
#[tokio::test]
async fn a_read_cut_by_the_statement_timeout_or_a_lost_connection_is_a_503() {
    let db = TestDb::new().await;
    let app = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .statement_timeout(Duration::from_secs(1))
        .start()
        .await;
    let patient = TestApp::builder(Store::PostgresAt(db.url().to_owned()))
        .start()
        .await;
    let (_, token) = app.user_with_token("waiter", SCOPES).await;
    let id = create_deck(&app, &token, "Locked").await;
    let read = |app: &TestApp| {
        app.client
            .get(app.api(&format!("/games/mtg/decks/{id}")))
            .bearer_auth(&token)
    };
    // Both instances have met the token, so only the deck read waits on the lock.
    assert_eq!(send(read(&app)).await.0, StatusCode::OK);
    assert_eq!(send(read(&patient)).await.0, StatusCode::OK);

    let mut blocker = connect(db.url()).await;
    let blocker_pid = backend_pid(&mut blocker).await;
    blocker
        .batch_execute("BEGIN; LOCK TABLE decks IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();

    let started = Instant::now();
    let (status, headers, body) = send(read(&app)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert!(headers.contains_key("retry-after"), "{headers:?}");
    assert!(started.elapsed() < Duration::from_secs(5));

    let waiting_read = {
        let request = read(&patient);
        tokio::spawn(async move { send(request).await })
    };
    end_the_session_waiting_on(db.url(), blocker_pid).await;
    let (status, headers, body) = waiting_read.await.unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert!(headers.contains_key("retry-after"), "{headers:?}");

    blocker.batch_execute("ROLLBACK").await.unwrap();
    // The ended session's connection is never handed out again (a checkout costs no round
    // trip, and the client may not have seen the socket close yet: the pool checks the
    // connections that may have lost their session, `pool::session_ended`): the very next read
    // of each instance succeeds.
    for (name, app) in [("app", &app), ("patient", &patient)] {
        let (status, _, body) = send(read(app)).await;
        assert_eq!(status, StatusCode::OK, "{name}: {body}");
    }
}

/// Ends (`pg_terminate_backend`) the one session waiting on a lock of the session `blocker`.
async fn end_the_session_waiting_on(url: &str, blocker: i64) {
    let mut killer = connect(url).await;
    let waiting = sessions_waiting_on(&mut killer, blocker, Duration::from_secs(10)).await;
    let ended = select_json(
        &mut killer,
        &format!(
            "SELECT json_agg(pg_terminate_backend(pid))::text AS json \
             FROM unnest(ARRAY{waiting:?}::int[]) AS pid"
        ),
    )
    .await
    .unwrap();
    assert_eq!(ended, json!([true]));
}
