//! Password verification off the request threads. Argon2 spends tens of milliseconds of CPU
//! per check by design; on an actix worker that time is stolen from every request the worker
//! holds, so a burst of sign-ins would stall the API. Here each check runs on the blocking
//! pool, and a semaphore bounds how many run at once (more would only queue for the same
//! cores, and leave none to the workers): further sign-ins wait for a permit without holding
//! any thread.

use std::sync::Arc;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::ports::{PasswordVerifier, SystemPorts};
use tokio::sync::Semaphore;

pub struct OffThreadPasswords {
    permits: Arc<Semaphore>,
}

impl OffThreadPasswords {
    /// At most `concurrent` (at least one) checks at once.
    pub fn new(concurrent: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(concurrent.max(1))),
        }
    }

    /// Half the cores (at least one), so that sign-ins never take all of them from the
    /// request workers.
    pub fn for_this_machine() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Self::new(cores / 2)
    }
}

#[async_trait]
impl PasswordVerifier for OffThreadPasswords {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn verify(&self, password: &str, stored_hash: &str) -> anyhow::Result<bool> {
        let _permit = self
            .permits
            .acquire()
            .await
            .context("the password check semaphore was closed")?;
        let (password, stored_hash) = (password.to_owned(), stored_hash.to_owned());
        let verified = tokio::task::spawn_blocking(move || {
            deckhand_auth::verify_password(&password, &stored_hash)
        })
        .await
        .context("the password check did not finish")?;
        Ok(verified?)
    }
}

/// The system ports of a server: [`SystemPorts::system`] with passwords checked off the
/// request threads.
pub fn server_system_ports() -> SystemPorts {
    SystemPorts {
        passwords: Arc::new(OffThreadPasswords::for_this_machine()),
        ..SystemPorts::system()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn hash(password: &str) -> String {
        deckhand_auth::hash_password(password, &[7; 32]).unwrap()
    }

    #[tokio::test]
    async fn checks_give_the_same_answers_as_argon2() {
        let verifier = OffThreadPasswords::new(1);
        let stored = hash("correct horse");
        assert!(verifier.verify("correct horse", &stored).await.unwrap());
        assert!(!verifier.verify("wrong horse", &stored).await.unwrap());
        assert!(verifier.verify("x", "not a PHC string").await.is_err());
    }

    /// On a single-threaded runtime (an actix worker is one), a burst of checks leaves the
    /// thread free: a ticker on it keeps ticking while they run. One check at a time, so that
    /// on a 2-core machine running other tests the checks do not take both cores from the
    /// ticker's thread (with two, the OS once left it waiting 36 ms in CI).
    #[tokio::test(flavor = "current_thread")]
    async fn a_burst_of_checks_does_not_stall_the_runtime_thread() {
        let verifier = Arc::new(OffThreadPasswords::new(1));
        let stored = hash("correct horse");
        // What one check would hold the thread for, were it run inline.
        let one_check = (0..2)
            .map(|_| {
                let started = Instant::now();
                let _ = deckhand_auth::verify_password("wrong", &stored);
                started.elapsed()
            })
            .min()
            .unwrap();
        let checks: Vec<_> = (0..6)
            .map(|_| {
                let verifier = Arc::clone(&verifier);
                let stored = stored.clone();
                tokio::spawn(async move { verifier.verify("wrong", &stored).await })
            })
            .collect();
        let mut longest_gap = Duration::ZERO;
        let mut last = Instant::now();
        while !checks.iter().all(tokio::task::JoinHandle::is_finished) {
            tokio::time::sleep(Duration::from_millis(2)).await;
            longest_gap = longest_gap.max(last.elapsed());
            last = Instant::now();
        }
        for check in checks {
            assert!(!check.await.unwrap().unwrap());
        }
        // Inline, every check would hold the thread for all of `one_check`, or longer on a
        // busy machine.
        assert!(
            longest_gap < one_check,
            "the thread stalled for {longest_gap:?}; one check takes {one_check:?}"
        );
    }
}
