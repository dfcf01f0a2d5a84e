//! The store as a whole: it answers a ping, and its prune jobs (contract §7) remove each kind of
//! record when its time has passed.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::oauth::{Session, ThrottleKey};
use deckhand_domain::ports::Repositories;

use crate::fixtures::{deck, now};

use super::support::{
    Outcome, anyone, claim_request, key_claim, oauth_setup, refresh_of, started_grant,
};

pub async fn the_store_answers_a_ping(repos: &Repositories) -> Outcome {
    repos.health.ping().await
}

/// The prune jobs of the store (contract §7) with short lifetimes: each kind of record goes
/// when its time has passed, in batches of two, and not before; then nothing is left to prune.
pub async fn every_kind_of_record_is_pruned_after_its_time_in_small_batches(
    repos: &Repositories,
) -> Outcome {
    use deckhand_domain::ports::{Clock as _, FixedClock};
    use deckhand_domain::pruning::{PruneService, Retention};
    use std::collections::BTreeMap;

    let start = now();
    let minute = time::Duration::minutes(1);
    let (alice, acme, client) = oauth_setup(repos).await?;
    let mut grants = Vec::new();
    for _ in 0..3 {
        grants.push(started_grant(repos, &client, &alice).await?);
    }
    let revoked = grants[0].1.access.token_hash;
    repos.oauth.revoke_access_token(&revoked, start).await?;
    repos.oauth.revoke_grant(grants[1].0.id, start).await?;
    repos
        .oauth
        .insert_session(&Session {
            token_hash: TokenHash::of("session"),
            user_id: alice.id,
            created_at: start,
            expires_at: start + 12 * 60 * minute,
        })
        .await?;
    for n in 0..3_u8 {
        let five = start + 5 * minute;
        repos
            .oauth
            .record_dpop_proof_once("jkt", &[n; 32], start, five)
            .await?;
        repos
            .signature_replays
            .record_signature_once(&acme.slug, &[n; 32], start, five)
            .await?;
    }
    repos
        .oauth
        .record_sign_in_failure(&[ThrottleKey::Username("alice".into())], start, start)
        .await?;
    repos
        .idempotency_keys
        .claim(&claim_request(&key_claim("user:a", "k"), b"{}", start))
        .await?;
    let viewed = deck(&alice, "Viewed");
    repos.decks.insert(&viewed).await?;
    for n in 0..3_u8 {
        repos
            .decks
            .count_view(viewed.id, &anyone(), &[n; 32], start, 60 * minute, 0.0)
            .await?;
    }

    let clock = std::sync::Arc::new(FixedClock::at(start));
    let pruning = PruneService::new(
        repos.prune_jobs.clone(),
        clock.clone(),
        Retention {
            pageview_window: 60 * minute,
            sign_in_window: 15 * minute,
            event_retention: 30 * 24 * 60 * minute,
        },
    );
    let round = || async {
        let mut deleted = BTreeMap::new();
        for pruned in pruning.prune_round(2, 100).await {
            let rows = pruned.deleted?;
            if rows > 0 {
                deleted.insert(pruned.name, rows);
            }
        }
        anyhow::Ok(deleted)
    };
    // Nothing is dead yet.
    assert_eq!(round().await?, BTreeMap::new());

    // Two hours on: codes, proof ids, signature replays, sign-in failures and pageview rows are
    // past their time; expired and revoked tokens are kept a week.
    clock.advance(120 * minute);
    let expected = BTreeMap::from([
        ("DPoP proof ids", 3),
        ("authorization codes", 3),
        ("pageview dedupe", 3),
        ("sign-in failures", 1),
        ("signature replays", 3),
    ]);
    assert_eq!(round().await?, expected);
    assert!(repos.oauth.find_access_token(&revoked).await?.is_some());
    let refresh = refresh_of(&grants[2].1)?.token_hash;
    assert!(repos.oauth.find_refresh_token(&refresh).await?.is_some());
    // The dedupe window is over for the pruned visitors: they count again.
    let again = repos
        .decks
        .count_view(
            viewed.id,
            &anyone(),
            &[0; 32],
            clock.now(),
            60 * minute,
            0.0,
        )
        .await?
        .context("a visible deck")?;
    assert!(again.incremented);

    // Eight days on: the revoked token and the revoked grant's refresh token, the session and
    // the idempotency record go; the grants whose tokens are all gone go with them.
    clock.advance(8 * 24 * 60 * minute);
    let expected = BTreeMap::from([
        ("expired access tokens", 2),
        ("grants without tokens", 1),
        ("idempotency records", 1),
        ("pageview dedupe", 1),
        ("refresh tokens of revoked grants", 1),
        ("revoked access tokens", 1),
        ("sign-in sessions", 1),
    ]);
    assert_eq!(round().await?, expected);
    assert!(repos.oauth.find_refresh_token(&refresh).await?.is_some());

    // A month on the last refresh tokens expire, and their grants go after them; the deck's
    // event is past the 30 days of retention.
    clock.advance(30 * 24 * 60 * minute);
    let expected = BTreeMap::from([
        ("events", 1),
        ("expired refresh tokens", 2),
        ("grants without tokens", 2),
    ]);
    assert_eq!(round().await?, expected);
    assert!(repos.oauth.find_refresh_token(&refresh).await?.is_none());
    assert_eq!(round().await?, BTreeMap::new());
    Ok(())
}
