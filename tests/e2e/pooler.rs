//! Deckhand through a real PgBouncer in transaction pooling mode (Debian's 1.18, no prepared
//! statement support), `DECKHAND_DB_POOLER=transaction`: two instances over one PgBouncer whose
//! pool holds two server connections, so every instance's statements share sessions. LISTEN
//! goes straight to PostgreSQL (`DATABASE_LISTEN_URL`), which wakes the events feed.

use std::time::{Duration, Instant};

use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, SimpleAsyncConnection as _};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::send;

const SCOPES: &str = "decks:read decks:write";

fn decks(app: &TestApp) -> String {
    app.api("/games/mtg/decks")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deck_flow_works_through_pgbouncer_in_transaction_mode_on_two_instances() {
    let cluster = OwnCluster::start("pooler").expect("a cluster of our own");
    // The statement timeout is the server's through a pooler: the operator sets it per role.
    let mut admin = AsyncPgConnection::establish(&cluster.url()).await.unwrap();
    admin
        .batch_execute("ALTER ROLE postgres SET statement_timeout = 15000")
        .await
        .unwrap();
    let bouncer = cluster.pgbouncer(2).expect("PgBouncer in front of it");
    let first = TestApp::builder(Store::Pooled {
        pooler: bouncer.url(),
        direct: cluster.url(),
    })
    .rate_limits(None)
    .start()
    .await;
    let second = first.another_instance().await;
    let (_, alice) = first.user_with_token("alice", SCOPES).await;
    let (_, bob) = second.user_with_token("bob", "decks:read").await;

    // A long poll on the second instance, woken by a write on the first.
    let (_, _, feed) = send(
        second
            .client
            .get(second.api("/games/mtg/events"))
            .bearer_auth(&bob),
    )
    .await;
    let cursor = feed["next_cursor"].as_str().unwrap().to_owned();
    let waiting = tokio::spawn(send(
        second
            .client
            .get(second.api(&format!("/games/mtg/events?after={cursor}&wait=20")))
            .bearer_auth(&bob),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();

    // Create, with an idempotency key, and its retry on the other instance.
    let body = json!({"name": "Pooled", "visibility": ["public"],
        "cards": [{"section": "mainboard", "quantity": 4, "name": "Siege Wurm"}]});
    let create = |app: &TestApp| {
        app.client
            .post(decks(app))
            .bearer_auth(&alice)
            .header("Idempotency-Key", "pooled-1")
            .json(&body)
    };
    let (status, _, created) = send(create(&first)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, headers, again) = send(create(&second)).await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(again, created);
    let id = created["id"].as_str().unwrap().to_owned();
    let deck = |app: &TestApp, rest: &str| app.api(&format!("/games/mtg/decks/{id}{rest}"));

    let (status, _, woken) = waiting.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{woken}");
    assert_eq!(woken["data"][0]["type"], "deck.created", "{woken}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // PATCH guarded by If-Match, alternating instances.
    let patch = |app: &TestApp, tag: &str, name: &str| {
        app.client
            .patch(deck(app, ""))
            .bearer_auth(&alice)
            .header("if-match", tag)
            .json(&json!({"name": name, "cards": [{"section": "mainboard", "quantity": 2, "name": "Island"}]}))
    };
    let (status, headers, patched) = send(patch(&second, "\"1\"", "Second")).await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(headers["etag"], "\"2\"");
    let (status, _, _) = send(patch(&first, "\"1\"", "Stale")).await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED);

    // Detail, versions, rollback, export, each on the other instance than the write.
    let (status, _, detail) = send(first.client.get(deck(&first, ""))).await;
    assert_eq!(
        (status, detail["name"].clone()),
        (StatusCode::OK, json!("Second"))
    );
    let (status, _, versions) = send(second.client.get(deck(&second, "/versions"))).await;
    assert_eq!(status, StatusCode::OK, "{versions}");
    assert_eq!(versions.as_array().map(Vec::len), Some(2), "{versions}");
    let (status, _, rolled) = send(
        first
            .client
            .post(deck(&first, "/rollback"))
            .bearer_auth(&alice)
            .json(&json!({"version_number": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{rolled}");
    assert_eq!(
        (rolled["name"].clone(), rolled["version"].clone()),
        (json!("Pooled"), json!(3))
    );
    let export = second
        .client
        .post(second.api("/games/mtg/decks/export/text"))
        .json(&json!({"deck_id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), StatusCode::OK);
    let text = export.text().await.unwrap();
    assert!(text.contains("4 Siege Wurm"), "{text}");

    // Lists with totals, many requests at once over both instances and two server
    // connections: every statement shares sessions with the others.
    for n in 0..6 {
        let (status, _, body) = send(
            first
                .client
                .post(decks(&first))
                .bearer_auth(&alice)
                .json(&json!({"name": format!("More {n}"), "visibility": ["public"]})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let lists = (0..40).map(|n| {
        let app = if n % 2 == 0 { &first } else { &second };
        send(
            app.client
                .get(format!("{}?limit=2&page={}", decks(app), n % 3 + 1)),
        )
    });
    for (status, _, page) in futures_util::future::join_all(lists).await {
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(page["pagination"]["total"], 7, "{page}");
    }
    let detail = |app: &TestApp| send(app.client.get(deck(app, "")));
    let details = (0..40).map(|n| detail(if n % 2 == 0 { &first } else { &second }));
    for (status, headers, body) in futures_util::future::join_all(details).await {
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(headers["etag"], "\"3\"", "{body}");
    }
    let names: Vec<Value> = send(first.client.get(format!("{}?limit=7", decks(&first))))
        .await
        .2["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|deck| deck["name"].clone())
        .collect();
    assert_eq!(names.len(), 7);

    drop(bouncer);
}

/// The server's own statement timeout, set for every session and applied to the sessions
/// PgBouncer already holds (a reload reaches them at their next statement).
async fn set_server_statement_timeout(url: &str, ms: u32) {
    let mut admin = AsyncPgConnection::establish(url).await.unwrap();
    // One statement per call: ALTER SYSTEM may not run in a transaction block.
    admin
        .batch_execute(&format!("ALTER SYSTEM SET statement_timeout = {ms}"))
        .await
        .unwrap();
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
}

/// `/readyz` until `done` holds for its answer, for at most 20 s.
async fn readyz_until(app: &TestApp, done: impl Fn(StatusCode, &Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, headers, body) = send(app.client.get(app.url("/readyz"))).await;
        if done(status, &body) {
            if status == StatusCode::SERVICE_UNAVAILABLE {
                assert!(headers.contains_key("retry-after"), "{body}");
            }
            return body;
        }
        assert!(Instant::now() < deadline, "{status} {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_timeout_changed_under_a_running_service_is_reported_by_readyz() {
    let cluster = OwnCluster::start("pooler-timeout").expect("a cluster of our own");
    set_server_statement_timeout(&cluster.url(), 15000).await;
    let bouncer = cluster.pgbouncer(2).expect("PgBouncer in front of it");
    let app = TestApp::builder(Store::Pooled {
        pooler: bouncer.url(),
        direct: cluster.url(),
    })
    .rate_limits(None)
    .start()
    .await;
    let ready = readyz_until(&app, |status, _| status == StatusCode::OK).await;
    assert_eq!(ready["databases"][0]["status"], "up", "{ready}");

    // The operator changes it under the running service: statements would run under another
    // limit than the service's; readiness says so, with the fix.
    set_server_statement_timeout(&cluster.url(), 5000).await;
    let body = readyz_until(&app, |status, body| {
        status == StatusCode::SERVICE_UNAVAILABLE
            && body["details"]["databases"][0]["status"] == "misconfigured"
    })
    .await;
    assert_eq!(body["error"], "SERVICE_UNAVAILABLE", "{body}");
    let problem = body["details"]["databases"][0]["problem"].as_str().unwrap();
    assert!(
        problem.contains("statement_timeout is 5000 ms, not the 15000 ms"),
        "{problem}"
    );
    assert!(problem.contains("ALTER ROLE"), "{problem}");
    assert!(
        body["message"].as_str().unwrap().contains(problem),
        "{body}"
    );

    // Put back, it is ready again.
    set_server_statement_timeout(&cluster.url(), 15000).await;
    readyz_until(&app, |status, _| status == StatusCode::OK).await;
    drop(bouncer);
}
