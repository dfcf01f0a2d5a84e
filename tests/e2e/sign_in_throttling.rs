//! Sign-in throttling on the consent page (contract §5): after five failed passwords for one
//! username, further sign-ins are refused (the right password too) for a delay that doubles,
//! with the page saying when to try again; fifty failures from one address close it to every
//! username; the counts are shared by instances.

use deckhand_domain::oauth::{OAuthPolicy, SignInThrottle};
use deckhand_testkit::app::{Store, TestApp};
use reqwest::StatusCode;
use reqwest::header::{LOCATION, RETRY_AFTER};

use crate::oauth_support::*;

/// A delay short enough to wait out in a test, long enough to be seen.
const DELAY_SECS: i64 = 2;

fn short_delays() -> OAuthPolicy {
    OAuthPolicy {
        sign_in: SignInThrottle {
            first_delay: time::Duration::seconds(DELAY_SECS),
            ..SignInThrottle::default()
        },
        ..OAuthPolicy::default()
    }
}

/// Posts a sign-in and approval as `username` with `password` through `app`'s own consent
/// page; returns the status, the `Retry-After` seconds and the page (or the redirect).
async fn sign_in(
    app: &TestApp,
    client_id: &str,
    username: &str,
    password: &str,
) -> (StatusCode, Option<i64>, String) {
    let query = authorize_query(client_id, "decks:read", "st");
    let form = open_consent(app, &query).await;
    let response = post_consent(
        app,
        &query,
        &format!("deckhand_csrf={}", form.csrf_cookie),
        &[
            ("csrf_token", &form.csrf_token),
            ("username", username),
            ("password", password),
            ("decision", "approve"),
        ],
    )
    .await;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .map(|value| value.to_str().unwrap().parse().unwrap());
    let location = response.headers().get(LOCATION).cloned();
    let page = response.text().await.unwrap();
    match location {
        Some(location) => (status, retry_after, location.to_str().unwrap().to_owned()),
        None => (status, retry_after, page),
    }
}

/// Five failures (spread over `instances`), then the right password refused during the delay
/// and accepted after it; the success forgets the count.
async fn five_failures_delay_even_the_right_password(instances: &[&TestApp]) {
    let world = world(instances[0]).await;
    for attempt in 1..=5 {
        let app = instances[attempt % instances.len()];
        let (status, retry_after, page) =
            sign_in(app, &world.client_id, "alice", "wrong password").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{attempt}: {page}");
        assert!(
            page.contains("The username or password is wrong."),
            "{page}"
        );
        if attempt < 5 {
            assert_eq!(retry_after, None, "{attempt}");
        } else {
            assert_eq!(retry_after, Some(DELAY_SECS), "{page}");
            assert!(page.contains("try again in 2 seconds"), "{page}");
        }
    }
    for app in instances {
        let (status, retry_after, page) = sign_in(app, &world.client_id, "ALICE", PASSWORD).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
        assert!(
            page.contains("Too many failed sign-ins. Try again in"),
            "{page}"
        );
        assert!(!page.contains("code="), "{page}");
        assert!(retry_after.is_some_and(|seconds| (1..=DELAY_SECS).contains(&seconds)));
    }
    tokio::time::sleep(std::time::Duration::from_millis(
        u64::try_from(DELAY_SECS).unwrap() * 1000 + 200,
    ))
    .await;
    let (status, _, location) = sign_in(instances[0], &world.client_id, "alice", PASSWORD).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{location}");
    assert!(location.contains("code="), "{location}");
    // The success reset the count: one more failure is only a failure.
    let (status, retry_after, _) =
        sign_in(instances[0], &world.client_id, "alice", "wrong again").await;
    assert_eq!((status, retry_after), (StatusCode::UNAUTHORIZED, None));
}

#[tokio::test]
async fn five_failures_delay_even_the_right_password_on_memory() {
    let app = TestApp::builder(Store::Memory)
        .oauth_policy(short_delays())
        .start()
        .await;
    five_failures_delay_even_the_right_password(&[&app]).await;
}

#[tokio::test]
async fn five_failures_on_two_instances_delay_the_right_password_on_both() {
    let app = TestApp::builder(Store::Postgres)
        .oauth_policy(short_delays())
        .start()
        .await;
    let other = app.another_instance().await;
    five_failures_delay_even_the_right_password(&[&app, &other]).await;
}

#[tokio::test]
async fn the_delay_doubles_with_each_further_failure() {
    let app = TestApp::builder(Store::Memory)
        .oauth_policy(short_delays())
        .start()
        .await;
    let world = world(&app).await;
    for _ in 0..5 {
        sign_in(&app, &world.client_id, "alice", "wrong").await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(2200)).await;
    let (status, retry_after, page) = sign_in(&app, &world.client_id, "alice", "wrong").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{page}");
    assert_eq!(retry_after, Some(2 * DELAY_SECS), "{page}");
}

#[tokio::test]
async fn fifty_failures_from_one_address_close_it_to_every_username() {
    let app = TestApp::builder(Store::Memory).start().await;
    let world = world(&app).await;
    for attempt in 0..50 {
        let username = format!("guess{attempt}");
        let (status, _, page) = sign_in(&app, &world.client_id, &username, "wrong").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{attempt}: {page}");
    }
    let (status, retry_after, page) = sign_in(&app, &world.client_id, "alice", PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{page}");
    assert!(page.contains("Try again in 15 minutes"), "{page}");
    assert!(retry_after.is_some_and(|seconds| (15 * 60 - 10..=15 * 60).contains(&seconds)));
}
