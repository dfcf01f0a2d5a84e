//! Webhooks end to end: the real service (its HTTP API, its store, its delivery worker) and a
//! real receiver on loopback, on both stores. Signatures are checked with the Standard
//! Webhooks reference crate (`standardwebhooks`), never with our own code.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

mod bodies;
mod fair_share;
mod receiver;
mod restart;
mod rotation;

use std::time::{Duration, Instant};

use deckhand_domain::webhooks::{DeliveryPolicy, RetrySchedule, TargetPolicy};
use deckhand_testkit::app::{Store, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use receiver::{Answer, Receiver};

fn policy(schedule: &str, timeout: Duration) -> DeliveryPolicy {
    DeliveryPolicy {
        targets: TargetPolicy {
            allow_private: true,
        },
        schedule: RetrySchedule::parse(schedule).unwrap(),
        timeout,
    }
}

async fn app(store: Store, policy: DeliveryPolicy) -> TestApp {
    TestApp::builder(store).webhooks(policy).start().await
}

/// A user with a PAT that writes decks, and a partner it owns with an API key; returns
/// (PAT, API key).
async fn partner(app: &TestApp, slug: &str, owner: &str) -> (String, String) {
    let (_, token) = app.user_with_token(owner, "decks:read decks:write").await;
    app.admin(&[
        "partner",
        "create",
        "--slug",
        slug,
        "--owner",
        owner,
        "--scopes",
        "decks:read",
        "--game-scopes",
        "mtg",
    ])
    .await
    .unwrap();
    let key = app
        .admin(&["api-key", "create", "--partner", slug])
        .await
        .unwrap();
    (token, key["key"].as_str().unwrap().to_owned())
}

async fn call(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = app
        .client
        .request(method, app.api(path))
        .header("x-api-key", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn register(app: &TestApp, key: &str, url: &str) -> Value {
    let (status, body) = call(
        app,
        reqwest::Method::POST,
        "/webhooks",
        key,
        Some(json!({"url": url, "description": "test receiver"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

async fn create_deck(app: &TestApp, token: &str, name: &str) -> Value {
    let response = app
        .client
        .post(app.api("/games/mtg/decks"))
        .bearer_auth(token)
        .json(&json!({"name": name, "visibility": ["public"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

async fn eventually<T>(
    what: &str,
    within: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn deliveries(app: &TestApp, key: &str, webhook: &str) -> Vec<Value> {
    let (status, body) = call(
        app,
        reqwest::Method::GET,
        &format!("/webhooks/{webhook}/deliveries?limit=100"),
        key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"].as_array().unwrap().clone()
}

async fn signed_delivery_verifies_with_an_independent_implementation(store: Store) {
    let app = app(store, policy("200ms", Duration::from_secs(5))).await;
    let receiver = Receiver::start(vec![]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let webhook = register(&app, &key, &receiver.url).await;
    let secret = webhook["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    let deck = create_deck(&app, &token, "Signed").await;

    let received = eventually(
        "the deck.created webhook",
        Duration::from_secs(10),
        async || receiver.received().into_iter().next(),
    )
    .await;
    let verifier = standardwebhooks::Webhook::new(&secret).unwrap();
    verifier
        .verify(received.body.as_bytes(), &received.headers)
        .expect("the reference implementation accepts the signature");
    let event: Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(event["type"], "deck.created");
    assert_eq!(event["subject"]["id"], deck["id"]);
    assert_eq!(received.headers["content-type"], "application/json");
    assert_eq!(
        received.headers["webhook-id"],
        event["id"].as_str().unwrap()
    );
    // A secret the partner does not hold does not verify.
    let other = standardwebhooks::Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    assert!(
        other
            .verify(received.body.as_bytes(), &received.headers)
            .is_err()
    );

    // Rotation: the old and the new secret both verify the next delivery.
    let id = webhook["id"].as_str().unwrap();
    let (status, rotated) = call(
        &app,
        reqwest::Method::POST,
        &format!("/webhooks/{id}/secret"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let new_secret = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, secret);
    create_deck(&app, &token, "After rotation").await;
    let second = eventually("the second webhook", Duration::from_secs(10), async || {
        receiver.received().get(1).cloned()
    })
    .await;
    let signatures = second.headers["webhook-signature"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
    for secret in [&secret, &new_secret] {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(second.body.as_bytes(), &second.headers)
            .expect("both secrets verify during a rotation");
    }

    // The log shows both, newest first, succeeded.
    let log = deliveries(&app, &key, id).await;
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|delivery| delivery["status"] == "succeeded"
        && delivery["attempt"] == 1
        && delivery["response_status"] == 204));
    assert_eq!(log[1]["event_id"], event["id"]);

    // /metrics counts this instance's attempts and shows the shared queue.
    let metrics = app.metrics_text().await;
    assert!(
        metrics.contains("deckhand_webhook_deliveries_total{outcome=\"succeeded\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("deckhand_webhook_queue_depth 0"),
        "{metrics}"
    );
    assert!(
        metrics.contains("deckhand_webhook_oldest_pending_seconds 0"),
        "{metrics}"
    );

    // Secrets are never listed.
    let (_, listed) = call(&app, reqwest::Method::GET, "/webhooks", &key, None).await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    assert!(listed["data"][0].get("secret").is_none());
}

#[tokio::test]
async fn signatures_verify_on_memory() {
    signed_delivery_verifies_with_an_independent_implementation(Store::Memory).await;
}

#[tokio::test]
async fn signatures_verify_on_postgres() {
    signed_delivery_verifies_with_an_independent_implementation(Store::Postgres).await;
}

async fn retries_keep_the_webhook_id(store: Store) {
    let app = app(store, policy("100ms,100ms,100ms", Duration::from_secs(5))).await;
    let receiver = Receiver::start(vec![Answer::Status(500), Answer::Status(500)]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let webhook = register(&app, &key, &receiver.url).await;
    create_deck(&app, &token, "Retried").await;
    let attempts = eventually("three attempts", Duration::from_secs(10), async || {
        let received = receiver.received();
        (received.len() >= 3).then_some(received)
    })
    .await;
    let ids: Vec<_> = attempts
        .iter()
        .map(|attempt| attempt.headers["webhook-id"].clone())
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    let log = eventually(
        "the delivery to succeed",
        Duration::from_secs(5),
        async || {
            let log = deliveries(&app, &key, webhook["id"].as_str().unwrap()).await;
            (log.first()?["status"] == "succeeded").then_some(log)
        },
    )
    .await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["attempt"], 3);
    assert_eq!(log[0]["response_status"], 204);
    assert_eq!(log[0]["error"], Value::Null);
}

#[tokio::test]
async fn retries_after_500s_keep_the_webhook_id_on_memory() {
    retries_keep_the_webhook_id(Store::Memory).await;
}

#[tokio::test]
async fn retries_after_500s_keep_the_webhook_id_on_postgres() {
    retries_keep_the_webhook_id(Store::Postgres).await;
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_counts_as_a_failure() {
    let app = app(Store::Memory, policy("", Duration::from_secs(5))).await;
    let target = Receiver::start(vec![]).await;
    let redirecting = Receiver::start(vec![Answer::Redirect(target.url.clone())]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let webhook = register(&app, &key, &redirecting.url).await;
    create_deck(&app, &token, "Redirected").await;
    let log = eventually("the failed delivery", Duration::from_secs(10), async || {
        let log = deliveries(&app, &key, webhook["id"].as_str().unwrap()).await;
        (log.first()?["status"] == "failed").then_some(log)
    })
    .await;
    assert_eq!(log[0]["response_status"], 307);
    assert_eq!(redirecting.received().len(), 1);
    assert!(target.received().is_empty(), "the redirect was followed");
}

#[tokio::test]
async fn a_hanging_receiver_times_out_without_slowing_requests_or_other_endpoints() {
    // The delivery timeout is long enough that a request held up by the hanging delivery
    // could not pass for a slow one on a loaded machine, even at half of it.
    let timeout = Duration::from_secs(2);
    let app = app(Store::Postgres, policy("", timeout)).await;
    let hanging = Receiver::start(vec![Answer::Hang; 8]).await;
    let healthy = Receiver::start(vec![]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let stuck = register(&app, &key, &hanging.url).await;
    register(&app, &key, &healthy.url).await;
    create_deck(&app, &token, "Slow").await;
    // The healthy endpoint hears of the event while the other hangs.
    eventually("the healthy endpoint", Duration::from_secs(5), async || {
        receiver_has(&healthy, 1)
    })
    .await;
    // API requests stay fast while the delivery hangs.
    for _ in 0..5 {
        let started = Instant::now();
        let response = app
            .client
            .get(app.api("/games/mtg/decks"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(started.elapsed() < timeout / 2, "{:?}", started.elapsed());
    }
    let log = eventually(
        "the timed-out delivery",
        Duration::from_secs(10),
        async || {
            let log = deliveries(&app, &key, stuck["id"].as_str().unwrap()).await;
            (log.first()?["status"] == "failed").then_some(log)
        },
    )
    .await;
    assert_eq!(log[0]["response_status"], Value::Null);
    assert!(
        log[0]["error"].as_str().unwrap().contains("timed out"),
        "{}",
        log[0]
    );
    let took = Duration::from_millis(log[0]["duration_ms"].as_u64().unwrap());
    assert!(timeout <= took && took < timeout * 3, "{took:?}");
}

fn receiver_has(receiver: &Receiver, count: usize) -> Option<()> {
    (receiver.received().len() >= count).then_some(())
}

#[tokio::test]
async fn two_instances_on_one_database_deliver_each_event_once() {
    let first = app(Store::Postgres, policy("100ms", Duration::from_secs(5))).await;
    let second = first.another_instance().await;
    let receiver = Receiver::start(vec![]).await;
    let (token, key) = partner(&first, "acme", "alice").await;
    register(&first, &key, &receiver.url).await;
    let names: Vec<String> = (0..20).map(|n| format!("Deck {n}")).collect();
    let mut writes = Vec::new();
    for (n, name) in names.iter().enumerate() {
        let instance = if n % 2 == 0 { &first } else { &second };
        writes.push(create_deck(instance, &token, name));
    }
    futures_util::future::join_all(writes).await;
    let received = eventually("twenty webhooks", Duration::from_secs(15), async || {
        let received = receiver.received();
        (received.len() >= 20).then_some(received)
    })
    .await;
    // Give a duplicate the time to arrive, then count.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let received = receiver.received().len().max(received.len());
    let mut ids: Vec<String> = receiver
        .received()
        .iter()
        .map(|attempt| attempt.headers["webhook-id"].to_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 20);
    assert_eq!(received, 20, "an event was delivered twice");
}

#[tokio::test]
async fn a_ping_is_delivered_and_not_in_the_feed() {
    let app = app(Store::Memory, policy("", Duration::from_secs(5))).await;
    let receiver = Receiver::start(vec![]).await;
    let (_, key) = partner(&app, "acme", "alice").await;
    let webhook = register(&app, &key, &receiver.url).await;
    let id = webhook["id"].as_str().unwrap();
    let (status, delivery) = call(
        &app,
        reqwest::Method::POST,
        &format!("/webhooks/{id}/ping"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(delivery["event_type"], "webhook.ping");
    let received = eventually("the ping", Duration::from_secs(5), async || {
        receiver.received().into_iter().next()
    })
    .await;
    let event: Value = serde_json::from_str(&received.body).unwrap();
    assert_eq!(event["type"], "webhook.ping");
    assert_eq!(event["actor"]["partner"], "acme");
    standardwebhooks::Webhook::new(webhook["secret"].as_str().unwrap())
        .unwrap()
        .verify(received.body.as_bytes(), &received.headers)
        .unwrap();
    // Retry by hand: one more attempt with the same webhook-id.
    let log = eventually("the ping's log", Duration::from_secs(5), async || {
        let log = deliveries(&app, &key, id).await;
        (log.first()?["status"] == "succeeded").then_some(log)
    })
    .await;
    let delivery_id = log[0]["id"].as_str().unwrap();
    let (status, _) = call(
        &app,
        reqwest::Method::POST,
        &format!("/webhooks/{id}/deliveries/{delivery_id}/retry"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let again = eventually("the retried ping", Duration::from_secs(5), async || {
        receiver.received().get(1).cloned()
    })
    .await;
    assert_eq!(again.headers["webhook-id"], received.headers["webhook-id"]);
}

/// Operators see every endpoint and stop one (`admin webhook list|disable`): the listing holds
/// no secret; from the disable on, the endpoint gets nothing, pings included, while another
/// endpoint gets every event; its partner sees `disabled_reason: "operator"` and cannot enable
/// it again.
async fn operators_list_and_disable_endpoints(store: Store) {
    let app = app(store, policy("100ms", Duration::from_secs(5))).await;
    let stopped = Receiver::start(vec![]).await;
    let kept = Receiver::start(vec![]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let (_, other_key) = partner(&app, "other", "bob").await;
    let webhook = register(&app, &key, &stopped.url).await;
    register(&app, &other_key, &kept.url).await;
    let id = webhook["id"].as_str().unwrap();

    let all = app.admin(&["webhook", "list"]).await.unwrap();
    let listed = all["webhooks"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{all}");
    assert_eq!(listed[0]["id"], webhook["id"]);
    assert_eq!(listed[0]["partner"], "acme");
    assert_eq!(listed[0]["url"], json!(stopped.url));
    assert_eq!(listed[0]["enabled"], true);
    assert_eq!(listed[0]["disabled_reason"], Value::Null);
    assert_eq!(listed[1]["partner"], "other");
    assert!(!all.to_string().contains("whsec_"), "{all}");
    let acme = app
        .admin(&["webhook", "list", "--partner", "acme"])
        .await
        .unwrap();
    assert_eq!(acme["webhooks"].as_array().unwrap().len(), 1, "{acme}");

    create_deck(&app, &token, "Before").await;
    eventually("the first event", Duration::from_secs(10), async || {
        receiver_has(&stopped, 1)
    })
    .await;
    let disabled = app
        .admin(&["webhook", "disable", "--id", id])
        .await
        .unwrap();
    assert_eq!(
        disabled,
        json!({"id": id, "partner": "acme", "enabled": false, "disabled_reason": "operator"})
    );
    let (status, _) = call(
        &app,
        reqwest::Method::POST,
        &format!("/webhooks/{id}/ping"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    create_deck(&app, &token, "After").await;
    // The other endpoint gets the second event; by then the worker has passed the disabled one
    // by, and a moment later still nothing has reached it.
    eventually(
        "the other endpoint's events",
        Duration::from_secs(10),
        async || receiver_has(&kept, 2),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        stopped.received().len(),
        1,
        "a delivery reached a disabled endpoint"
    );

    let (status, shown) = call(
        &app,
        reqwest::Method::GET,
        &format!("/webhooks/{id}"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shown["enabled"], false);
    assert_eq!(shown["disabled_reason"], "operator");
    let (status, body) = call(
        &app,
        reqwest::Method::PATCH,
        &format!("/webhooks/{id}"),
        &key,
        Some(json!({"enabled": true})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("disabled_by_operator"), "{body}");
    let after = app
        .admin(&["webhook", "list", "--partner", "acme"])
        .await
        .unwrap();
    assert_eq!(after["webhooks"][0]["enabled"], false, "{after}");
    assert_eq!(after["webhooks"][0]["disabled_reason"], "operator");
    let unknown = uuid::Uuid::nil().to_string();
    let error = app
        .admin(&["webhook", "disable", "--id", &unknown])
        .await
        .unwrap_err();
    assert!(
        format!("{error:#}").contains("no such webhook"),
        "{error:#}"
    );
}

#[tokio::test]
async fn operators_list_and_disable_endpoints_on_memory() {
    operators_list_and_disable_endpoints(Store::Memory).await;
}

#[tokio::test]
async fn operators_list_and_disable_endpoints_on_postgres() {
    operators_list_and_disable_endpoints(Store::Postgres).await;
}

#[tokio::test]
async fn management_is_for_the_partner_alone() {
    let app = TestApp::memory().await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let (_, other_key) = partner(&app, "rival", "bob").await;
    let body = json!({"url": "https://hooks.example.com/in"});
    // Other lanes: 401 (PAT), 401 (anonymous).
    let response = app
        .client
        .post(app.api("/webhooks"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = app.client.get(app.api("/webhooks")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // Private and plain-http targets are refused (the test app does not allow them).
    for url in [
        "http://hooks.example.com/",
        "https://127.0.0.1/",
        "https://[::1]/",
        "https://10.0.0.1/x",
    ] {
        let (status, refused) = call(
            &app,
            reqwest::Method::POST,
            "/webhooks",
            &key,
            Some(json!({"url": url})),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}");
        assert_eq!(refused["details"]["fields"][0]["field"], "url");
    }
    // A literal public address needs no lookup; 16 endpoints, then 400.
    let public = json!({"url": "https://93.184.216.34/hook", "types": ["deck.*"]});
    let mut ids = Vec::new();
    for _ in 0..16 {
        let (status, made) = call(
            &app,
            reqwest::Method::POST,
            "/webhooks",
            &key,
            Some(public.clone()),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        assert_eq!(made["types"], json!(["deck.*"]));
        assert_eq!(made["games"], json!(["mtg"]));
        assert_eq!(made["enabled"], true);
        assert_eq!(made["disabled_reason"], Value::Null);
        ids.push(made["id"].as_str().unwrap().to_owned());
    }
    let (status, _) = call(
        &app,
        reqwest::Method::POST,
        "/webhooks",
        &key,
        Some(public.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // Another partner's id is 404 on every operation.
    let id = &ids[0];
    for (method, path) in [
        (reqwest::Method::GET, format!("/webhooks/{id}")),
        (reqwest::Method::PATCH, format!("/webhooks/{id}")),
        (reqwest::Method::DELETE, format!("/webhooks/{id}")),
        (reqwest::Method::POST, format!("/webhooks/{id}/secret")),
        (reqwest::Method::POST, format!("/webhooks/{id}/ping")),
        (reqwest::Method::GET, format!("/webhooks/{id}/deliveries")),
    ] {
        let body = (method == reqwest::Method::PATCH).then(|| json!({"description": "x"}));
        let (status, _) = call(&app, method.clone(), &path, &other_key, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
    }
    // PATCH and DELETE by the owner.
    let (status, changed) = call(
        &app,
        reqwest::Method::PATCH,
        &format!("/webhooks/{id}"),
        &key,
        Some(json!({"description": null, "enabled": false, "types": ["*"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["enabled"], false);
    assert_eq!(changed["types"], json!(["*"]));
    let (status, _) = call(
        &app,
        reqwest::Method::DELETE,
        &format!("/webhooks/{id}"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = call(
        &app,
        reqwest::Method::GET,
        &format!("/webhooks/{id}"),
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &app,
        reqwest::Method::GET,
        "/webhooks/not-a-uuid",
        &key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A process killed mid-attempt leaves its delivery leased; once the lease ends another
/// instance attempts it again with the same `webhook-id` (at least once).
#[tokio::test]
async fn a_delivery_whose_worker_was_killed_mid_attempt_is_attempted_again() {
    let mut first = app(Store::Postgres, policy("100ms", Duration::from_secs(3))).await;
    let receiver = Receiver::start(vec![Answer::Hang]).await;
    let (token, key) = partner(&first, "acme", "alice").await;
    let webhook = register(&first, &key, &receiver.url).await;
    create_deck(&first, &token, "Interrupted").await;
    eventually("the first attempt", Duration::from_secs(5), async || {
        receiver_has(&receiver, 1)
    })
    .await;
    first.kill_webhook_worker();
    let second = first.another_instance().await;
    // The lease (2 x 3 s + 30 s) has to run out first.
    let log = eventually("the second attempt", Duration::from_secs(60), async || {
        let log = deliveries(&second, &key, webhook["id"].as_str().unwrap()).await;
        (log.first()?["status"] == "succeeded").then_some(log)
    })
    .await;
    assert_eq!(
        log[0]["attempt"], 1,
        "the killed attempt was never recorded"
    );
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].headers["webhook-id"],
        received[1].headers["webhook-id"]
    );
}
