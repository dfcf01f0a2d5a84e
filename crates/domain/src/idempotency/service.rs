use std::sync::Arc;

use super::ports::{ClaimRequest, Claimed, IdempotencyRepository, KeyClaim};
use super::{ABANDONED_AFTER, Fingerprint, IdempotencyKey, KEY_LIFETIME, StoredResponse, is_kept};
use crate::identity::Principal;
use crate::system::SystemPorts;

/// Why a request with a key may not run.
#[derive(Debug, thiserror::Error)]
pub enum IdempotencyError {
    /// The first request with this key is still running.
    #[error("a request with this Idempotency-Key is still being processed")]
    InProgress,
    /// The key was used for another request (another method, path or body).
    #[error("this Idempotency-Key was used for another request")]
    KeyReused,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// What to do with a request that carries a key.
#[derive(Debug)]
pub enum Begin {
    /// Run it, then [`IdempotencyService::finish`] the claim with its response.
    Run(Claim),
    /// Answer with the response of the first request again.
    Replay(StoredResponse),
}

/// The key a running request holds. Finish it with the response.
#[derive(Debug)]
#[must_use = "a claim holds its key until finished"]
pub struct Claim(KeyClaim);

#[derive(Clone)]
pub struct IdempotencyService {
    keys: Arc<dyn IdempotencyRepository>,
    system: SystemPorts,
}

impl IdempotencyService {
    pub fn new(keys: Arc<dyn IdempotencyRepository>, system: SystemPorts) -> Self {
        Self { keys, system }
    }

    /// Claims `key` for this request of `principal` (keys are scoped to the caller string, so
    /// two callers never share one), or finds the response to replay.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn begin(
        &self,
        principal: &Principal,
        key: IdempotencyKey,
        fingerprint: Fingerprint,
    ) -> Result<Begin, IdempotencyError> {
        let claim = KeyClaim {
            caller: principal.caller(),
            key,
            claim_id: self.system.ids.new_id(),
        };
        let now = self.system.clock.now();
        let request = ClaimRequest {
            claim: claim.clone(),
            fingerprint,
            now,
            expires_at: now + KEY_LIFETIME,
            abandoned_before: now - ABANDONED_AFTER,
        };
        match self.keys.claim(&request).await? {
            Claimed::Claimed => Ok(Begin::Run(Claim(claim))),
            Claimed::Held(record) if record.fingerprint != fingerprint => {
                Err(IdempotencyError::KeyReused)
            }
            Claimed::Held(record) => match record.response {
                Some(response) => Ok(Begin::Replay(response)),
                None => Err(IdempotencyError::InProgress),
            },
        }
    }

    /// Keeps `response` for replays when [`is_kept`] says so; otherwise frees the key, so a
    /// retry runs again.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn finish(
        &self,
        Claim(claim): Claim,
        response: &StoredResponse,
    ) -> anyhow::Result<()> {
        if is_kept(response.status) {
            self.keys.complete(&claim, response).await
        } else {
            self.keys.release(&claim).await
        }
    }

    /// Frees the key of a request that produced no response at all.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn abandon(&self, Claim(claim): Claim) -> anyhow::Result<()> {
        self.keys.release(&claim).await
    }
}

#[cfg(test)]
mod tests {
    use futures_executor::block_on;
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;
    use crate::idempotency::ports::{KeyRecord, MockIdempotencyRepository};
    use crate::system::{FixedClock, MockIdGenerator, MockRandom};

    fn service(keys: MockIdempotencyRepository) -> IdempotencyService {
        let mut ids = MockIdGenerator::new();
        ids.expect_new_id().returning(|| Uuid::from_u128(9));
        IdempotencyService::new(
            Arc::new(keys),
            SystemPorts {
                clock: Arc::new(FixedClock::at(datetime!(2026-11-23 8:00 UTC))),
                ids: Arc::new(ids),
                random: Arc::new(MockRandom::new()),
                passwords: Arc::new(crate::system::InlinePasswordVerifier),
            },
        )
    }

    fn key() -> IdempotencyKey {
        IdempotencyKey::parse(b"k1").unwrap()
    }

    fn response(status: u16) -> StoredResponse {
        StoredResponse {
            status,
            headers: vec![],
            body: b"{}".to_vec(),
        }
    }

    fn begin(keys: MockIdempotencyRepository, body: &[u8]) -> Result<Begin, IdempotencyError> {
        block_on(service(keys).begin(
            &Principal::anonymous(),
            key(),
            Fingerprint::of("POST", "/x", body),
        ))
    }

    #[test]
    fn a_claim_is_scoped_to_the_caller_and_lives_24_hours() {
        let mut keys = MockIdempotencyRepository::new();
        keys.expect_claim()
            .withf(|request| {
                request.claim.caller == "anonymous"
                    && request.expires_at - request.now == KEY_LIFETIME
                    && request.now - request.abandoned_before == ABANDONED_AFTER
            })
            .returning(|_| Ok(Claimed::Claimed));
        assert!(matches!(begin(keys, b"{}"), Ok(Begin::Run(_))));
    }

    #[test]
    fn a_held_key_replays_refuses_another_request_or_is_in_progress() {
        let held = |response: Option<StoredResponse>| {
            let mut keys = MockIdempotencyRepository::new();
            keys.expect_claim().returning(move |_| {
                Ok(Claimed::Held(KeyRecord {
                    fingerprint: Fingerprint::of("POST", "/x", b"{}"),
                    response: response.clone(),
                }))
            });
            keys
        };
        assert!(
            matches!(begin(held(Some(response(201))), b"{}"), Ok(Begin::Replay(r)) if r.status == 201)
        );
        assert!(matches!(
            begin(held(Some(response(201))), b"{\"a\":1}"),
            Err(IdempotencyError::KeyReused)
        ));
        assert!(matches!(
            begin(held(None), b"{}"),
            Err(IdempotencyError::InProgress)
        ));
    }

    #[test]
    fn kept_responses_complete_the_claim_and_server_errors_release_it() {
        for (status, completes) in [(201, true), (422, true), (500, false), (403, false)] {
            let mut keys = MockIdempotencyRepository::new();
            keys.expect_claim().returning(|_| Ok(Claimed::Claimed));
            keys.expect_complete()
                .times(usize::from(completes))
                .returning(|_, _| Ok(()));
            keys.expect_release()
                .times(usize::from(!completes))
                .returning(|_| Ok(()));
            let service = service(keys);
            let Ok(Begin::Run(claim)) = block_on(service.begin(
                &Principal::anonymous(),
                key(),
                Fingerprint::of("POST", "/x", b""),
            )) else {
                panic!("claimed");
            };
            block_on(service.finish(claim, &response(status))).unwrap();
        }
    }
}
