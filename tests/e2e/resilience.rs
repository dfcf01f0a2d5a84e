//! The database going away under a running server: answers turn into 503s quickly (no hang),
//! and the server recovers by itself when the database is back.

use std::time::{Duration, Instant};

use deckhand_testkit::app::{Store, TestApp};
use deckhand_testkit::db::OwnCluster;
use reqwest::StatusCode;

use crate::support::{assert_envelope, send};

/// "Within a few seconds": the pool gives up on a dead server well before this.
const PROMPT: Duration = Duration::from_secs(8);

#[tokio::test]
async fn a_stopped_database_is_a_prompt_503_and_a_restarted_one_is_used_again() {
    let cluster = OwnCluster::start("outage").expect("a cluster of our own");
    let app = TestApp::builder(Store::PostgresAt(cluster.url()))
        .start()
        .await;
    let (_, token) = app.user_with_token("outage-user", "decks:read").await;
    let probe = || app.client.get(app.api("/_probe/user")).bearer_auth(&token);
    assert_eq!(send(probe()).await.0, StatusCode::OK);

    cluster.stop().expect("stop PostgreSQL");

    let started = Instant::now();
    let (status, headers, body) = send(app.client.get(app.url("/readyz"))).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert!(headers.contains_key("retry-after"));
    let (status, headers, body) = send(probe()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_envelope(&body, "SERVICE_UNAVAILABLE");
    assert!(headers.contains_key("retry-after"));
    assert!(started.elapsed() < PROMPT, "took {:?}", started.elapsed());

    cluster.restart().expect("start PostgreSQL again");

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, _) = send(app.client.get(app.url("/readyz"))).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "never became ready again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (status, _, body) = send(probe()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
