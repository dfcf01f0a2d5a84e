//! Idempotency keys: claimed once per caller, claimed again once expired, released or
//! abandoned, and one winner among concurrent first claims.

use deckhand_domain::idempotency::ports::{Claimed, KeyRecord};
use deckhand_domain::idempotency::{self, Fingerprint, StoredResponse};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;

use crate::fixtures::now;

use super::support::{Outcome, claim_request, key_claim};

fn created(body: &str) -> StoredResponse {
    StoredResponse {
        status: 201,
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("etag".into(), "\"1\"".into()),
        ],
        body: body.as_bytes().to_vec(),
    }
}

pub async fn an_idempotency_key_is_claimed_once_per_caller(repos: &Repositories) -> Outcome {
    let keys = &repos.idempotency_keys;
    let at = datetime!(2026-06-01 12:00 UTC);
    let first = key_claim("user:a", "k-1");
    assert_eq!(
        keys.claim(&claim_request(&first, b"{}", at)).await?,
        Claimed::Claimed
    );
    // While it runs, a repeat finds it unfinished, whatever its body.
    let repeat = key_claim("user:a", "k-1");
    let in_progress = Claimed::Held(KeyRecord {
        fingerprint: Fingerprint::of("POST", "/games/mtg/decks", b"{}"),
        response: None,
    });
    assert_eq!(
        keys.claim(&claim_request(&repeat, b"{}", at)).await?,
        in_progress
    );
    // Keys are the caller's: another caller's same key is another key.
    let other_caller = key_claim("partner:acme", "k-1");
    assert_eq!(
        keys.claim(&claim_request(&other_caller, b"{}", at)).await?,
        Claimed::Claimed
    );
    // Only the holding claim completes it; the response comes back byte for byte.
    keys.complete(&repeat, &created("{\"wrong\":true}")).await?;
    keys.complete(&first, &created("{\"id\":\"é\"}")).await?;
    assert_eq!(
        keys.claim(&claim_request(
            &repeat,
            b"{}",
            at + time::Duration::hours(23)
        ))
        .await?,
        Claimed::Held(KeyRecord {
            fingerprint: Fingerprint::of("POST", "/games/mtg/decks", b"{}"),
            response: Some(created("{\"id\":\"é\"}")),
        })
    );
    // A finished record is never released, and is never abandoned.
    keys.release(&first).await?;
    let later = at + time::Duration::hours(2);
    assert!(matches!(
        keys.claim(&claim_request(&repeat, b"{}", later)).await?,
        Claimed::Held(KeyRecord {
            response: Some(_),
            ..
        })
    ));
    Ok(())
}

pub async fn expired_released_and_abandoned_keys_are_claimed_again(
    repos: &Repositories,
) -> Outcome {
    let keys = &repos.idempotency_keys;
    let at = datetime!(2026-06-01 12:00 UTC);
    // Expired after 24 hours, even when finished.
    let first = key_claim("user:a", "expires");
    keys.claim(&claim_request(&first, b"{}", at)).await?;
    keys.complete(&first, &created("{}")).await?;
    let next_day = key_claim("user:a", "expires");
    assert_eq!(
        keys.claim(&claim_request(
            &next_day,
            b"{\"other\":1}",
            at + idempotency::KEY_LIFETIME
        ))
        .await?,
        Claimed::Claimed
    );
    // Released by its holder: free at once.
    let failed = key_claim("user:a", "released");
    keys.claim(&claim_request(&failed, b"{}", at)).await?;
    keys.release(&key_claim("user:a", "released")).await?;
    assert!(matches!(
        keys.claim(&claim_request(&key_claim("user:a", "released"), b"{}", at))
            .await?,
        Claimed::Held(_)
    ));
    keys.release(&failed).await?;
    let retry = key_claim("user:a", "released");
    assert_eq!(
        keys.claim(&claim_request(&retry, b"{}", at)).await?,
        Claimed::Claimed
    );
    // Unfinished past the abandonment delay: a retry takes it over, and the overtaken
    // request can neither complete nor release it afterwards.
    let takeover_at = at + idempotency::ABANDONED_AFTER;
    let successor = key_claim("user:a", "released");
    assert_eq!(
        keys.claim(&claim_request(&successor, b"{}", takeover_at))
            .await?,
        Claimed::Claimed
    );
    keys.complete(&retry, &created("{\"stale\":true}")).await?;
    keys.release(&retry).await?;
    keys.complete(&successor, &created("{\"fresh\":true}"))
        .await?;
    assert_eq!(
        keys.claim(&claim_request(
            &key_claim("user:a", "released"),
            b"{}",
            takeover_at
        ))
        .await?,
        Claimed::Held(KeyRecord {
            fingerprint: Fingerprint::of("POST", "/games/mtg/decks", b"{}"),
            response: Some(created("{\"fresh\":true}")),
        })
    );
    Ok(())
}

pub async fn concurrent_first_claims_of_a_key_let_exactly_one_win(repos: &Repositories) -> Outcome {
    let at = now();
    let claims = (0..8).map(|_| {
        let keys = repos.idempotency_keys.clone();
        let request = claim_request(&key_claim("user:a", "race"), b"{}", at);
        tokio::spawn(async move { keys.claim(&request).await })
    });
    let mut winners = 0;
    for claim in claims.collect::<Vec<_>>() {
        if claim.await?? == Claimed::Claimed {
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
    Ok(())
}
