//! The system ports: the clock, new ids, randomness and the store's health, which every service
//! may take without knowing the repositories, and their production and test implementations.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;
use uuid::Uuid;

/// The current time. Rule functions take `now` as a parameter; services ask the clock once.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Clock: Send + Sync {
    fn now(&self) -> OffsetDateTime;
}

/// New identifiers.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait IdGenerator: Send + Sync {
    fn new_id(&self) -> Uuid;
}

/// Cryptographically secure random bytes for secrets and salts.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Random: Send + Sync {
    fn bytes32(&self) -> anyhow::Result<[u8; 32]>;
}

/// Checks passwords against stored argon2 hashes. Argon2 spends tens of milliseconds of CPU
/// by design, so where it runs is the adapter's choice: the server runs it off the threads
/// that serve requests (`deckhand::passwords`), so that a burst of sign-ins cannot stall them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PasswordVerifier: Send + Sync {
    /// Whether `password` matches `stored_hash`, a PHC string; a malformed hash is an error.
    async fn verify(&self, password: &str, stored_hash: &str) -> anyhow::Result<bool>;
}

/// Verifies on the calling thread: for one-shot commands and tests, where nothing else waits
/// for the thread.
#[derive(Debug, Default, Clone, Copy)]
pub struct InlinePasswordVerifier;

#[async_trait]
impl PasswordVerifier for InlinePasswordVerifier {
    async fn verify(&self, password: &str, stored_hash: &str) -> anyhow::Result<bool> {
        Ok(deckhand_auth::verify_password(password, stored_hash)?)
    }
}

/// Liveness of the store behind the repositories, for `/readyz` and `/metrics`.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait StoreHealth: Send + Sync {
    /// Ok when the store answers a trivial query; an error carrying `StoreUnavailable` if not.
    async fn ping(&self) -> anyhow::Result<()>;
    /// Connection pool figures, where the store has a pool.
    fn pool_status(&self) -> Option<PoolStatus>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    pub max_size: usize,
    pub size: usize,
    pub available: usize,
    pub waiting: usize,
}

/// The system ports, bundled so services take one argument for them.
#[derive(Clone)]
pub struct SystemPorts {
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    pub random: Arc<dyn Random>,
    pub passwords: Arc<dyn PasswordVerifier>,
}

/// The real clock: now, truncated to microseconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        crate::time::truncate_to_micros(OffsetDateTime::now_utc())
    }
}

/// Time-ordered UUIDs (v7), which keep primary-key indexes append-mostly.
#[derive(Debug, Default, Clone, Copy)]
pub struct UuidV7Ids;

impl IdGenerator for UuidV7Ids {
    fn new_id(&self) -> Uuid {
        Uuid::now_v7()
    }
}

impl Random for deckhand_auth::OsRandom {
    fn bytes32(&self) -> anyhow::Result<[u8; 32]> {
        Ok(deckhand_auth::OsRandom::bytes32(self)?)
    }
}

impl SystemPorts {
    /// The production ports: system clock, v7 ids, the OS CSPRNG, and passwords verified on
    /// the calling thread (a server replaces that with a verifier that keeps argon2 off its
    /// request threads).
    pub fn system() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            ids: Arc::new(UuidV7Ids),
            random: Arc::new(deckhand_auth::OsRandom::new()),
            passwords: Arc::new(InlinePasswordVerifier),
        }
    }
}

/// A clock that stands still until moved: for tests of time rules.
#[derive(Debug)]
pub struct FixedClock(std::sync::Mutex<OffsetDateTime>);

impl FixedClock {
    pub fn at(instant: OffsetDateTime) -> Self {
        Self(std::sync::Mutex::new(crate::time::truncate_to_micros(
            instant,
        )))
    }

    pub fn advance(&self, by: time::Duration) {
        if let Ok(mut now) = self.0.lock() {
            *now += by;
        }
    }
}

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        self.0
            .lock()
            .map(|now| *now)
            .unwrap_or_else(|poisoned| *poisoned.into_inner())
    }
}
