//! Rotating an endpoint's secret: which secrets sign a delivery afterwards.

use std::time::Duration;

use deckhand_testkit::app::Store;
use reqwest::StatusCode;

use super::receiver::Receiver;
use super::{app, call, create_deck, eventually, partner, policy, register};

/// One previous secret is kept, the one before the latest rotation: a second rotation within
/// 24 hours ends the first secret's signatures at once (docs/webhooks.md, "Rotating the
/// secret"); deliveries carry the newest secret's signature and the one before it.
#[tokio::test]
async fn a_second_rotation_within_a_day_stops_the_oldest_secret_from_signing() {
    let app = app(Store::Memory, policy("200ms", Duration::from_secs(5))).await;
    let receiver = Receiver::start(vec![]).await;
    let (token, key) = partner(&app, "acme", "alice").await;
    let webhook = register(&app, &key, &receiver.url).await;
    let id = webhook["id"].as_str().unwrap();
    let mut secrets = vec![webhook["secret"].as_str().unwrap().to_owned()];
    for _ in 0..2 {
        let (status, rotated) = call(
            &app,
            reqwest::Method::POST,
            &format!("/webhooks/{id}/secret"),
            &key,
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{rotated}");
        secrets.push(rotated["secret"].as_str().unwrap().to_owned());
    }
    create_deck(&app, &token, "After two rotations").await;
    let got = eventually("the delivery", Duration::from_secs(10), async || {
        receiver.received().into_iter().next()
    })
    .await;
    let signatures = got.headers["webhook-signature"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
    let verifies = |secret: &str| {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(got.body.as_bytes(), &got.headers)
            .is_ok()
    };
    assert!(verifies(&secrets[2]), "the newest secret");
    assert!(
        verifies(&secrets[1]),
        "the secret before the latest rotation"
    );
    assert!(!verifies(&secrets[0]), "the first secret still signs");
}
