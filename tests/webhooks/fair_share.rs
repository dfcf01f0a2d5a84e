//! Fair share between endpoints (contract "Webhooks"): one partner's hanging, flooded endpoint
//! holds at most two attempts at a time, across instances, and never delays another endpoint's
//! delivery by more than one attempt's time; pings queue one at a time.

use std::time::{Duration, Instant};

use deckhand_testkit::app::{Store, TestApp};
use futures_util::StreamExt as _;
use reqwest::StatusCode;
use serde_json::Value;

use super::receiver::{Answer, Receiver};
use super::{call, create_deck, deliveries, eventually, partner, policy, receiver_has, register};

/// Asserts that no three of `arrivals` fall within `span` of each other: with at most two
/// attempts in flight, each lasting the whole timeout against a hanging receiver, any three
/// arrivals span at least about the timeout, and `span` is a fraction of it.
fn at_most_two_at_once(receiver: &Receiver, span: Duration) {
    let mut arrivals: Vec<Instant> = receiver.received().iter().map(|got| got.at).collect();
    arrivals.sort();
    for three in arrivals.windows(3) {
        assert!(
            three[2] - three[0] >= span,
            "three attempts within {:?} of each other: more than two in flight",
            three[2] - three[0]
        );
    }
}

/// The report this reproduces: a partner's endpoint hangs with 400 deliveries queued (its
/// attempts each run into the timeout), and another partner's endpoint waited behind the
/// whole queue: with 8 attempts at a time and a 2 s timeout, some 100 s. Now the other
/// partner's delivery arrives within one attempt's time of its event.
async fn a_flooded_hanging_endpoint_does_not_delay_another_partners_delivery(store: Store) {
    const FLOOD: usize = 400;
    let timeout = Duration::from_secs(2);
    let app = TestApp::builder(store)
        .webhooks(policy("", timeout))
        .rate_limits(None)
        .start()
        .await;
    let hanging = Receiver::start(vec![Answer::Hang; FLOOD + 1]).await;
    let healthy = Receiver::start(vec![]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    register(&app, &key, &hanging.url).await;
    futures_util::stream::iter(0..FLOOD)
        .map(|n| {
            let (app, token) = (&app, &token);
            async move { create_deck(app, token, &format!("Flood {n}")).await }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    eventually(
        "attempts at the hanging endpoint",
        Duration::from_secs(10),
        async || receiver_has(&hanging, 1),
    )
    .await;

    let (_, rival_key) = partner(&app, "rival", "bob").await;
    register(&app, &rival_key, &healthy.url).await;
    let started = Instant::now();
    create_deck(&app, &token, "Next").await;
    let written = Instant::now();
    let arrived = eventually("the other partner's delivery", timeout * 3, async || {
        healthy.received().first().map(|got| got.at)
    })
    .await;
    let took = arrived - started;
    eprintln!(
        "fair share: with {FLOOD} deliveries queued for a hanging endpoint, another partner's \
         delivery arrived {took:?} after the request that wrote its event was sent, {:?} after \
         its answer",
        arrived.saturating_duration_since(written)
    );
    assert!(took < timeout, "{took:?}");
    at_most_two_at_once(&hanging, timeout / 2);
}

#[tokio::test]
async fn a_flooded_hanging_endpoint_does_not_delay_another_partners_delivery_on_memory() {
    a_flooded_hanging_endpoint_does_not_delay_another_partners_delivery(Store::Memory).await;
}

#[tokio::test]
async fn a_flooded_hanging_endpoint_does_not_delay_another_partners_delivery_on_postgres() {
    a_flooded_hanging_endpoint_does_not_delay_another_partners_delivery(Store::Postgres).await;
}

/// Two instances, each with 8 attempt slots, share one hanging endpoint's queue: together they
/// run two of its attempts at a time, not two each (nor sixteen).
#[tokio::test]
async fn two_instances_run_two_attempts_of_a_hanging_endpoint_at_a_time_together() {
    let timeout = Duration::from_secs(1);
    let first = TestApp::builder(Store::Postgres)
        .webhooks(policy("", timeout))
        .rate_limits(None)
        .start()
        .await;
    let second = first.another_instance().await;
    let hanging = Receiver::start(vec![Answer::Hang; 40]).await;
    let (token, key) = partner(&first, "acme", "alice").await;
    register(&first, &key, &hanging.url).await;
    for n in 0..20 {
        let instance = if n % 2 == 0 { &first } else { &second };
        create_deck(instance, &token, &format!("Deck {n}")).await;
    }
    // Three rounds of attempts, each ended by the timeout.
    eventually("six attempts", Duration::from_secs(30), async || {
        receiver_has(&hanging, 6)
    })
    .await;
    at_most_two_at_once(&hanging, timeout / 2);
}

async fn ping(app: &TestApp, key: &str, id: &str) -> Value {
    let (status, delivery) = call(
        app,
        reqwest::Method::POST,
        &format!("/webhooks/{id}/ping"),
        key,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{delivery}");
    delivery
}

/// A ping while one is pending answers 202 with the pending one: eight at once queue one, and
/// one while its attempt hangs names it too; once it has ended, a ping queues a new one.
async fn a_ping_while_one_is_pending_answers_with_it(store: Store) {
    let timeout = Duration::from_secs(1);
    let app = TestApp::builder(store)
        .webhooks(policy("", timeout))
        .start()
        .await;
    let receiver = Receiver::start(vec![Answer::Hang]).await;
    let (_, key) = partner(&app, "acme", "alice").await;
    let webhook = register(&app, &key, &receiver.url).await;
    let id = webhook["id"].as_str().unwrap();

    let answers = futures_util::future::join_all((0..8).map(|_| ping(&app, &key, id))).await;
    let first = answers[0]["id"].clone();
    for answer in &answers {
        assert_eq!(answer["id"], first, "{answers:?}");
        assert_eq!(answer["event_type"], "webhook.ping");
        assert_eq!(answer["status"], "pending");
    }
    eventually("the ping's attempt", Duration::from_secs(5), async || {
        receiver_has(&receiver, 1)
    })
    .await;
    assert_eq!(ping(&app, &key, id).await["id"], first);

    let log = eventually("the ping to fail", Duration::from_secs(10), async || {
        let log = deliveries(&app, &key, id).await;
        (log.first()?["status"] == "failed").then_some(log)
    })
    .await;
    assert_eq!(log.len(), 1, "{log:?}");
    let next = ping(&app, &key, id).await;
    assert_ne!(next["id"], first);
    eventually("the second ping", Duration::from_secs(5), async || {
        receiver_has(&receiver, 2)
    })
    .await;
    assert_eq!(deliveries(&app, &key, id).await.len(), 2);
}

#[tokio::test]
async fn a_ping_while_one_is_pending_answers_with_it_on_memory() {
    a_ping_while_one_is_pending_answers_with_it(Store::Memory).await;
}

#[tokio::test]
async fn a_ping_while_one_is_pending_answers_with_it_on_postgres() {
    a_ping_while_one_is_pending_answers_with_it(Store::Postgres).await;
}
