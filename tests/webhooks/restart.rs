//! PostgreSQL restarted while writers write and the worker delivers. Afterwards every write the
//! API acknowledged has its event, the feed lists each event once in ascending `sequence`, and
//! the receiver has heard of every event in the feed at least once (by `webhook-id`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::receiver::Receiver;
use crate::{eventually, partner, policy, register};

const WRITERS: usize = 3;
/// Writes acknowledged after the restart before the writers stop.
const WRITES_AFTER: usize = 60;
/// No request may take longer: the pool gives up on a dead server well before.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// An acknowledged write: the deck and the version the API answered with.
type Acknowledged = BTreeSet<(String, i64)>;

/// Creates a deck, then renames it, alternately, until `stop`, counting each acknowledged write
/// in `acked`; returns what was acknowledged (a create is version 1) and how many writes were
/// not.
async fn writer(
    app: Arc<TestApp>,
    token: String,
    writer: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> (Acknowledged, usize) {
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap();
    let mut acknowledged = Acknowledged::new();
    let mut refused = 0;
    let mut deck: Option<String> = None;
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let request = match &deck {
            Some(id) => client
                .patch(app.api(&format!("/games/mtg/decks/{id}")))
                .json(&json!({"name": format!("w{writer}-{n}")})),
            None => client
                .post(app.api("/games/mtg/decks"))
                .json(&json!({"name": format!("w{writer}-{n}"), "visibility": ["public"]})),
        };
        let answer = match request.bearer_auth(&token).send().await {
            Ok(response) if response.status().is_success() => response.json::<Value>().await.ok(),
            _ => None,
        };
        match answer {
            Some(body) => {
                let id = body["id"].as_str().unwrap().to_owned();
                acknowledged.insert((id.clone(), body["version"].as_i64().unwrap()));
                acked.fetch_add(1, Ordering::Relaxed);
                // Every third write starts a new deck.
                deck = (n % 3 != 2).then_some(id);
            }
            None => {
                refused += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    (acknowledged, refused)
}

/// The whole feed, page by page from the start: each deck event as (sequence, event id,
/// deck id, version).
async fn whole_feed(app: &TestApp, token: &str) -> Vec<(i64, String, String, i64)> {
    let mut events = Vec::new();
    let mut cursor = String::new();
    loop {
        let response = app
            .client
            .get(app.api(&format!("/games/mtg/events?limit=100{cursor}")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let page: Value = response.json().await.unwrap();
        for event in page["data"].as_array().unwrap() {
            if event["type"] == "catalog.imported" {
                continue;
            }
            events.push((
                event["sequence"].as_i64().unwrap(),
                event["id"].as_str().unwrap().to_owned(),
                event["subject"]["id"].as_str().unwrap().to_owned(),
                event["data"]["version"].as_i64().unwrap(),
            ));
        }
        if page["has_more"] != true {
            return events;
        }
        cursor = format!("&after={}", page["next_cursor"].as_str().unwrap());
    }
}

/// The oldest 20 deliveries still pending or failed, as the store holds them: what a failure
/// shows.
async fn deliveries_not_succeeded(url: &str) -> Value {
    let mut conn = deckhand_testkit::db::direct::connect(url).await;
    deckhand_testkit::db::direct::select_json(
        &mut conn,
        "SELECT coalesce(json_agg(json_build_object(
             'event', event_id, 'status', status, 'attempt', attempt, 'retries', retries_used,
             'next_attempt_at', next_attempt_at, 'lease_until', lease_until,
             'attempted_at', attempted_at, 'error', error, 'response_status', response_status,
             'now', now()) ORDER BY sequence), '[]')::text AS json
         FROM (SELECT * FROM webhook_deliveries WHERE status <> 'succeeded'
               ORDER BY sequence LIMIT 20) AS oldest",
    )
    .await
    .unwrap_or_else(|error| json!(format!("{error:#}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restart_loses_no_event_and_no_delivery() {
    let started = Instant::now();
    let cluster = OwnCluster::start("webhook-restart").expect("a cluster of our own");
    let app = Arc::new(
        TestApp::builder(Store::PostgresAt(cluster.url()))
            .webhooks(policy("200ms,500ms,1s,1s,1s", Duration::from_secs(2)))
            .rate_limits(None)
            .start()
            .await,
    );
    let receiver = Receiver::start(vec![]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    register(&app, &key, &receiver.url).await;

    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..WRITERS)
        .map(|n| {
            tokio::spawn(writer(
                app.clone(),
                token.clone(),
                n,
                stop.clone(),
                acked.clone(),
            ))
        })
        .collect();
    // Deliveries are under way before the restart.
    eventually(
        "the first deliveries",
        Duration::from_secs(20),
        async || (receiver.received().len() >= 5).then_some(()),
    )
    .await;
    // pg_ctl blocks: the writers and the worker go on on the other worker thread meanwhile.
    tokio::task::block_in_place(|| cluster.stop()).expect("stop PostgreSQL");
    tokio::time::sleep(Duration::from_secs(1)).await;
    tokio::task::block_in_place(|| cluster.restart()).expect("start PostgreSQL again");
    let restarted = Instant::now();
    let before = receiver.received().len();
    // Writes are acknowledged again for a moment after the restart, then stop: the one
    // endpoint takes two deliveries at a time, so writers left running for as long as the
    // deliveries take to come back would queue more than it can be sent within the test.
    let acked_before = acked.load(Ordering::Relaxed);
    eventually(
        "writes acknowledged after the restart",
        Duration::from_secs(30),
        async || (acked.load(Ordering::Relaxed) >= acked_before + WRITES_AFTER).then_some(()),
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    // The one endpoint has at most two attempts in flight: when the restart cut off both its
    // claims' answers, it gets nothing new until the first of those leases ends
    // (`DeliveryPolicy::lease`, 34 s here).
    let lease = policy("200ms", Duration::from_secs(2)).lease();
    eventually(
        "new deliveries after the restart",
        lease + Duration::from_secs(20),
        async || (receiver.received().len() >= before + 5).then_some(()),
    )
    .await;
    let recovered = restarted.elapsed();
    let mut acknowledged = Acknowledged::new();
    let mut refused = 0;
    for writer in writers {
        let (mine, theirs) = writer.await.unwrap();
        acknowledged.extend(mine);
        refused += theirs;
    }
    assert!(
        refused > 0,
        "the restart refused no write: the test tested nothing"
    );

    // The feed: ascending, each event once, and every acknowledged write in it.
    let feed = whole_feed(&app, &token).await;
    assert!(
        feed.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "the feed is not strictly ascending"
    );
    let ids: BTreeSet<&String> = feed.iter().map(|event| &event.1).collect();
    assert_eq!(ids.len(), feed.len(), "an event is listed twice");
    let written: BTreeMap<(String, i64), &String> = feed
        .iter()
        .map(|(_, id, deck, version)| ((deck.clone(), *version), id))
        .collect();
    assert_eq!(written.len(), feed.len(), "two events for one write");
    let missing: Vec<_> = acknowledged
        .iter()
        .filter(|write| !written.contains_key(*write))
        .collect();
    assert!(
        missing.is_empty(),
        "acknowledged without an event: {missing:?}"
    );

    // The receiver: every event of the feed at least once. Most arrive within a second of the
    // restart; a claim whose answer the restart cut off waits out its lease (2 x 2 s + 30 s).
    let heard = || -> Vec<String> {
        receiver
            .received()
            .iter()
            .map(|hook| hook.headers["webhook-id"].to_str().unwrap().to_owned())
            .filter(|id| ids.contains(id))
            .collect()
    };
    let deadline = Instant::now() + lease + Duration::from_secs(45);
    loop {
        let heard: BTreeSet<String> = heard().into_iter().collect();
        if heard.len() == ids.len() {
            break;
        }
        if Instant::now() >= deadline {
            let unheard: Vec<&String> = ids
                .iter()
                .copied()
                .filter(|id| !heard.contains(*id))
                .collect();
            panic!(
                "{} of {} events never delivered, first {:?}; the oldest deliveries not \
                 succeeded: {:#}",
                unheard.len(),
                ids.len(),
                &unheard[..unheard.len().min(5)],
                deliveries_not_succeeded(&cluster.url()).await,
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deliveries = heard().len();
    eprintln!(
        "restart: {} writes acknowledged, {refused} refused; {} events in the feed, {deliveries} \
         deliveries received ({} repeats); deliveries again {recovered:?} after PostgreSQL \
         started; the test took {:?}",
        acknowledged.len(),
        feed.len(),
        deliveries - ids.len(),
        started.elapsed(),
    );
    assert!(
        started.elapsed() < lease + Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}
