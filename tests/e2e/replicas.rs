//! Read replicas (contract, section 8) over a real streaming replica of a cluster of the test's
//! own: which reads the replica serves (proved by `/metrics`, reads per database), the fall
//! back to the primary when replay lags past the limit and the return once it catches up, a
//! long poll of the events feed served by a lagging replica, and reads answered with the
//! primary stopped while writes are 503. One primary and one replica serve every step, in
//! order, so the cluster pair is made once.

use std::time::{Duration, Instant};

use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use deckhand_testkit::db::direct::connect;
use diesel_async::SimpleAsyncConnection as _;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{assert_envelope, event_subjects, send};

/// Short, so that a paused replica passes it quickly (the monitor samples four times within it).
const MAX_LAG: Duration = Duration::from_millis(300);

/// How long anything the test waits for may take.
const PATIENCE: Duration = Duration::from_secs(10);

/// Reads this instance routed to (the primary, the replica) so far.
async fn reads(app: &TestApp) -> (u64, u64) {
    let text = app.metrics_text().await;
    let count = |database: &str| {
        let prefix = format!("deckhand_db_reads_total{{database=\"{database}\"}} ");
        text.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .map_or(0, |value| value.parse().unwrap())
    };
    (count("primary"), count("replica-1"))
}

/// `request`'s answer, and which database the instance routed it to.
async fn routed(
    app: &TestApp,
    request: reqwest::RequestBuilder,
) -> (StatusCode, Value, &'static str) {
    let before = reads(app).await;
    let (status, _, body) = send(request).await;
    let after = reads(app).await;
    let database = match (after.0 - before.0, after.1 - before.1) {
        (1, 0) => "primary",
        (0, 1) => "replica",
        (0, 0) => "none",
        counts => panic!("one request, reads routed {counts:?}"),
    };
    (status, body, database)
}

/// The answer to the request `make` builds, once the instance routed one to the replica. A
/// busy machine can delay the monitor's sample past the short limit, when the primary answers
/// instead, so a single try would test the machine's load rather than the routing.
async fn on_replica(
    app: &TestApp,
    make: impl Fn() -> reqwest::RequestBuilder,
) -> (StatusCode, Value) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, body, database) = routed(app, make()).await;
        if database == "replica" {
            return (status, body);
        }
        assert!(
            Instant::now() < deadline,
            "never routed to the replica: {status} {body}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Polls `check` until it holds, for at most [`PATIENCE`].
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + PATIENCE;
    while !check().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn a_streaming_replica_serves_anonymous_and_partner_reads_within_its_lag() {
    let started = Instant::now();
    let primary = OwnCluster::start("replicas-primary").expect("a primary of our own");
    let replica = primary
        .replica("replicas-standby")
        .expect("a streaming replica of it");
    let app = TestApp::builder(Store::PostgresAt(primary.url()))
        .replicas(&[replica.url()], MAX_LAG)
        .rate_limits(None)
        .start()
        .await;
    let (_, alice) = app.user_with_token("alice", "decks:read decks:write").await;
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
    let key = app
        .admin(&["api-key", "create", "--partner", "acme"])
        .await
        .unwrap()["key"]
        .as_str()
        .unwrap()
        .to_owned();

    // (1) Every write goes to the primary (the replica refuses writes), and routes no read.
    let before = reads(&app).await;
    let (status, _, deck) = send(
        app.client
            .post(app.api("/games/mtg/decks"))
            .bearer_auth(&alice)
            .json(&json!({"name": "Replicated", "visibility": ["public"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{deck}");
    assert_eq!(reads(&app).await, before, "a write routed a read");
    let id = deck["id"].as_str().unwrap().to_owned();
    let detail = app.api(&format!("/games/mtg/decks/{id}"));

    // Anonymous reads go to the replica once it has replayed the write and been measured.
    eventually("an anonymous read served by the replica", || async {
        let (status, _, database) = routed(&app, app.client.get(&detail)).await;
        status == StatusCode::OK && database == "replica"
    })
    .await;
    let (status, body) = on_replica(&app, || app.client.get(&detail)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["name"], "Replicated");
    let (status, body) = on_replica(&app, || app.client.get(app.api("/games/mtg/decks"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"][0]["id"], id.as_str());
    let (status, body) = on_replica(&app, || app.client.get(app.api("/games"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body[0]["slug"], "mtg", "{body}");
    // A partner-only caller's reads too (its API key checked on the primary).
    let (status, body) =
        on_replica(&app, || app.client.get(&detail).header("x-api-key", &key)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A caller with a user identity reads from the primary.
    let (status, body, database) = routed(&app, app.client.get(&detail).bearer_auth(&alice)).await;
    assert_eq!((status, database), (StatusCode::OK, "primary"), "{body}");
    assert_eq!(body["name"], "Replicated");

    // (4) /readyz and /metrics show each database.
    let (status, _, ready) = send(app.client.get(app.url("/readyz"))).await;
    assert_eq!(status, StatusCode::OK, "{ready}");
    assert_eq!(
        ready["databases"][0],
        json!({"name": "primary", "status": "up"})
    );
    assert_eq!(ready["databases"][1]["name"], "replica-1");
    assert_eq!(ready["databases"][1]["status"], "up");
    assert!(
        ready["databases"][1]["lag_ms"].as_u64().unwrap() < 1000,
        "{ready}"
    );
    let metrics = app.metrics_text().await;
    assert!(
        metrics.contains("deckhand_db_replica_lag_seconds{database=\"replica-1\"} "),
        "{metrics}"
    );
    let (primary_reads, replica_reads) = reads(&app).await;
    assert!(primary_reads >= 1 && replica_reads >= 5, "{metrics}");

    // A partner's long poll of the feed, served by the replica, woken through the primary.
    let feed = |query: &str| {
        app.client
            .get(app.api(&format!("/games/mtg/events{query}")))
            .header("x-api-key", &key)
    };
    let (status, page, database) = routed(&app, feed("")).await;
    assert_eq!((status, database), (StatusCode::OK, "replica"), "{page}");
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let before = reads(&app).await;
    let waiting = tokio::spawn(send(feed(&format!("?after={cursor}&wait=20"))));
    eventually("the long poll routed", || async {
        reads(&app).await != before
    })
    .await;
    assert_eq!(
        reads(&app).await.1,
        before.1 + 1,
        "the long poll is not on the replica"
    );

    // (2) Replay paused: a write on the primary leaves the replica behind.
    let mut standby = connect(&replica.url()).await;
    standby
        .batch_execute("SELECT pg_wal_replay_pause()")
        .await
        .unwrap();
    let (status, _, body) = send(
        app.client
            .patch(&detail)
            .bearer_auth(&alice)
            .json(&json!({"name": "Renamed"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let wrote = Instant::now();
    // Once the lag passes the limit, anonymous reads fall back to the primary and see it.
    eventually("anonymous reads fall back to the primary", || async {
        let (status, body, database) = routed(&app, app.client.get(&detail)).await;
        status == StatusCode::OK && database == "primary" && body["name"] == "Renamed"
    })
    .await;
    // The feed's reader heard of the event but the replica does not show it yet: it waits on,
    // neither answering empty nor skipping the event.
    tokio::time::sleep(Duration::from_millis(500).saturating_sub(wrote.elapsed())).await;
    assert!(
        !waiting.is_finished(),
        "the long poll answered before the replica had the event"
    );

    standby
        .batch_execute("SELECT pg_wal_replay_resume()")
        .await
        .unwrap();
    let (status, _, page) = tokio::time::timeout(PATIENCE, waiting)
        .await
        .expect("the long poll answers once the replica replays")
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{page}");
    let events = event_subjects(&page);
    assert_eq!(events, [("deck.updated", id.as_str())], "{page}");
    // Caught up again: anonymous reads return to the replica.
    eventually("anonymous reads return to the replica", || async {
        let (status, body, database) = routed(&app, app.client.get(&detail)).await;
        status == StatusCode::OK && database == "replica" && body["name"] == "Renamed"
    })
    .await;

    // (3) The primary stopped: the replica still answers anonymous lists and details; writes
    // and the readiness of the instance are 503.
    primary.stop().expect("stop the primary");
    for url in [detail.clone(), app.api("/games/mtg/decks")] {
        let (status, body, database) = routed(&app, app.client.get(&url)).await;
        assert_eq!(
            (status, database),
            (StatusCode::OK, "replica"),
            "{url}: {body}"
        );
    }
    let (status, body, database) = routed(&app, app.client.get(app.api("/games/mtg/decks"))).await;
    assert_eq!((status, database), (StatusCode::OK, "replica"), "{body}");
    assert_eq!(body["data"][0]["name"], "Renamed");
    let (status, headers, body) = send(
        app.client
            .patch(&detail)
            .bearer_auth(&alice)
            .json(&json!({"name": "Lost"})),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert!(headers.contains_key("retry-after"));
    let (status, headers, body) = send(app.client.get(app.url("/readyz"))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(headers.contains_key("retry-after"));
    let details = assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert_eq!(
        details["databases"][0],
        json!({"name": "primary", "status": "down"})
    );
    assert_eq!(details["databases"][1]["status"], "up", "{body}");

    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}
