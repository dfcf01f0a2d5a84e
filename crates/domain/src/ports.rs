//! The ports: what the domain needs from the world. Adapters (memory, postgres) implement the
//! repositories; the application supplies the system ports ([`crate::system`], re-exported here).
//!
//! Error contract for every repository method: business outcomes are variants of the method's
//! own error enum; anything else is `anyhow::Error`, and an adapter that cannot reach its store
//! puts [`crate::error::StoreUnavailable`] in that error's chain.

use std::sync::Arc;

pub use crate::catalog::ports::CatalogRepository;
pub use crate::collections::ports::CollectionRepository;
pub use crate::decks::ports::DeckRepository;
pub use crate::events::ports::EventRepository;
pub use crate::idempotency::ports::IdempotencyRepository;
pub use crate::identity::ports::{
    ApiKeyRepository, PartnerRepository, PatRepository, SignatureReplayRepository, UserRepository,
};
pub use crate::oauth::ports::OAuthRepository;
pub use crate::pruning::{Kept, PruneBatch, PruneJob};
pub use crate::sideboards::ports::SideboardGuideRepository;
pub use crate::system::{
    Clock, FixedClock, IdGenerator, InlinePasswordVerifier, PasswordVerifier, PoolStatus, Random,
    StoreHealth, SystemClock, SystemPorts, UuidV7Ids,
};
#[cfg(feature = "mock")]
pub use crate::system::{
    MockClock, MockIdGenerator, MockPasswordVerifier, MockRandom, MockStoreHealth,
};
pub use crate::webhooks::ports::WebhookRepository;

/// Every repository of one store, as the application wires them.
#[derive(Clone)]
pub struct Repositories {
    pub users: Arc<dyn UserRepository>,
    pub pats: Arc<dyn PatRepository>,
    pub decks: Arc<dyn DeckRepository>,
    pub sideboard_guides: Arc<dyn SideboardGuideRepository>,
    pub partners: Arc<dyn PartnerRepository>,
    pub api_keys: Arc<dyn ApiKeyRepository>,
    pub signature_replays: Arc<dyn SignatureReplayRepository>,
    pub oauth: Arc<dyn OAuthRepository>,
    pub health: Arc<dyn StoreHealth>,
    pub catalog: Arc<dyn CatalogRepository>,
    pub idempotency_keys: Arc<dyn IdempotencyRepository>,
    pub events: Arc<dyn EventRepository>,
    /// What the store prunes, one job per kind of record (see [`crate::pruning`]).
    pub prune_jobs: Vec<PruneJob>,
    pub webhooks: Arc<dyn WebhookRepository>,
    pub collections: Arc<dyn CollectionRepository>,
}
