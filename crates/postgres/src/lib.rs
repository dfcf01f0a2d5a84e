//! PostgreSQL behind the domain's ports: the diesel schema and row types, one adapter per port
//! over diesel-async and a deadpool pool, the embedded migrations, and the single mapping from
//! diesel and pool errors to the domain's error enums (`error.rs`).
//!
//! It owns SQL and connections and nothing else: it must never know about HTTP, the app's
//! settings or the in-memory adapter, and it holds no business rule. The domain decides; this
//! crate stores what it is given and reports what it finds.
//!
//! Each port method is one transaction: a single statement, or an explicit transaction over
//! private helpers that take `&mut AsyncPgConnection` so they compose.

mod catalog;
mod collections;
mod decks;
mod ended_sessions;
mod error;
mod events;
mod health;
mod idempotency;
mod likes;
mod list_counts;
mod listener;
mod migrations;
mod oauth;
mod partners;
mod pats;
mod pool;
mod pruning;
mod replays;
mod replication;
mod rules;
mod schema;
mod scopes;
mod server_settings;
mod sideboards;
mod statement;
mod stored;
mod user_row;
mod usernames;
mod users;
mod webhooks;

use std::sync::Arc;

use deckhand_domain::events::ports::{EventRepository, PastRetention};
use deckhand_domain::ports::{Kept, PruneJob, Repositories};
use deckhand_domain::webhooks::DELIVERY_RETENTION;
use deckhand_domain::webhooks::ports::{EndedDeliveries, WebhookRepository};

use crate::listener::Listener;

/// The resolution statements, for the test that pins their plans; the choice of where card
/// lookups are answered, for the tests that hold both ways to the catalog contract.
#[doc(hidden)]
pub use catalog::{CardLookups, RESOLUTION_STATEMENTS};
pub use migrations::{MIGRATIONS, pending_migrations, run_migrations};
pub use pool::{
    HOME_WAIT, POOL_TIMEOUT, Pool, Pooler, STATEMENT_TIMEOUT, connect, connect_in_shards,
    connect_through, connect_with_timeout, set_this_thread_apart,
};
pub use replication::{Replicated, replicated};
pub use server_settings::check_statement_timeout;

/// Every repository over one pool, which also gives the connection that LISTENs.
pub fn repositories(pool: Pool) -> Repositories {
    repositories_listening_on(pool.clone(), pool)
}

/// Every repository over `pool`, with the connection that LISTENs for changes taken from
/// `listen`: straight to PostgreSQL when `pool` goes through a transaction-mode pooler, which
/// would hand a LISTENing session to other clients (`DATABASE_LISTEN_URL`).
pub fn repositories_listening_on(pool: Pool, listen: Pool) -> Repositories {
    repositories_and_events(pool, &Listener::new(listen)).0
}

/// As [`repositories_listening_on`], and the event log among them, whose news of new events
/// replicas share (`replication`).
fn repositories_and_events(pool: Pool, listen: &Listener) -> (Repositories, Arc<events::PgEvents>) {
    let pat_cache = pats::PatCache::new(listen.clone());
    let event_log = Arc::new(events::PgEvents::new(pool.clone(), listen));
    let events: Arc<dyn EventRepository> = event_log.clone();
    let mut prune_jobs = pruning::jobs(&pool);
    prune_jobs.push(PruneJob::new(
        "events",
        Kept::EventRetention,
        PastRetention(events.clone()),
    ));
    let webhooks: Arc<dyn WebhookRepository> =
        Arc::new(webhooks::PgWebhookRepository::new(pool.clone(), listen));
    prune_jobs.push(PruneJob::new(
        "webhook deliveries",
        Kept::For(DELIVERY_RETENTION),
        EndedDeliveries(webhooks.clone()),
    ));
    let repositories = Repositories {
        users: Arc::new(users::PgUserRepository {
            pool: pool.clone(),
            pats: pat_cache.clone(),
        }),
        pats: Arc::new(pats::PgPatRepository {
            pool: pool.clone(),
            cache: pat_cache,
        }),
        decks: Arc::new(decks::PgDeckRepository::new(pool.clone())),
        sideboard_guides: Arc::new(sideboards::PgSideboardGuides::new(pool.clone())),
        catalog: Arc::new(catalog::PgCatalog::new(pool.clone(), listen.clone())),
        partners: Arc::new(partners::PgPartnerRepository { pool: pool.clone() }),
        api_keys: Arc::new(partners::PgApiKeyRepository { pool: pool.clone() }),
        signature_replays: Arc::new(partners::PgSignatureReplayRepository { pool: pool.clone() }),
        oauth: Arc::new(oauth::PgOAuthRepository { pool: pool.clone() }),
        idempotency_keys: Arc::new(idempotency::PgIdempotencyKeys { pool: pool.clone() }),
        events,
        prune_jobs,
        webhooks,
        collections: Arc::new(collections::PgCollections::new(pool.clone())),
        health: Arc::new(health::PgHealth {
            pool,
            statement_timeout: None,
        }),
    };
    (repositories, event_log)
}

/// The health check of a store reached through a transaction-mode pooler: each ping also holds
/// the server's `statement_timeout` to `statement_timeout`, which an operator may change under
/// a running service (a difference is a `StoreMisconfigured` in the ping's error).
pub fn pooled_health(
    pool: Pool,
    statement_timeout: std::time::Duration,
) -> Arc<dyn deckhand_domain::ports::StoreHealth> {
    Arc::new(health::PgHealth {
        pool,
        statement_timeout: Some(statement_timeout),
    })
}

/// As [`repositories`], with the card lookups of a resolution answered as `lookups` says.
#[doc(hidden)]
pub async fn repositories_with_card_lookups(
    pool: Pool,
    lookups: CardLookups,
) -> anyhow::Result<Repositories> {
    let listen = Listener::new(pool.clone());
    let catalog = catalog::PgCatalog::with_lookups(pool.clone(), listen.clone(), lookups).await?;
    Ok(Repositories {
        catalog: Arc::new(catalog),
        ..repositories_and_events(pool, &listen).0
    })
}
