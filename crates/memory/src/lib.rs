//! Every port of the domain in memory: the store of a service run without PostgreSQL, and the
//! fast stand-in for it in tests. It keeps the same promises as the PostgreSQL adapter (the
//! repository contract suite in `deckhand_testkit` runs against both), including the ones a
//! database would enforce with constraints: unique usernames, slugs and token hashes, owners that exist.
//!
//! It must never know about HTTP, SQL or the app. All state sits behind one `std` mutex, taken
//! only in synchronous sections so it is never held across an `.await`.

mod catalog;
mod collections;
mod decks;
mod events;
mod health;
mod idempotency;
mod identity;
mod list;
mod oauth;
mod partners;
mod sideboards;
mod webhooks;

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use deckhand_domain::events::ports::{EventRepository, PastRetention};
use deckhand_domain::ports::{Kept, PruneBatch, PruneJob, Repositories};
use deckhand_domain::webhooks::DELIVERY_RETENTION;
use deckhand_domain::webhooks::ports::{EndedDeliveries, WebhookRepository};
use time::OffsetDateTime;

/// Everything stored, one map per table.
#[derive(Debug, Default)]
struct State {
    identity: identity::Tables,
    decks: decks::Tables,
    catalog: catalog::Tables,
    partners: partners::Tables,
    oauth: oauth::Tables,
    sideboards: sideboards::Tables,
    idempotency: idempotency::Tables,
    events: events::Tables,
    webhooks: webhooks::Tables,
    collections: collections::Tables,
}

#[derive(Debug, Clone, Default)]
struct Store(Arc<Mutex<State>>);

impl Store {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every section under the lock leaves the state consistent before anything that could
        // panic, so a poisoned lock still guards valid data.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Single-use records with an expiry (signature replays, DPoP proof ids). Lookups judge expiry
/// themselves; the queue, in insertion order, lets each insert prune what has expired from the
/// front in amortised constant time instead of scanning every record.
#[derive(Debug)]
struct ReplayRecords<K> {
    live: HashMap<K, OffsetDateTime>,
    queue: VecDeque<(OffsetDateTime, K)>,
}

impl<K> Default for ReplayRecords<K> {
    fn default() -> Self {
        Self {
            live: HashMap::new(),
            queue: VecDeque::new(),
        }
    }
}

impl<K: Eq + Hash + Clone> ReplayRecords<K> {
    /// Forgets at most `limit` records expired at `before`.
    fn prune(&mut self, before: OffsetDateTime, limit: u32) -> u64 {
        prune_map(&mut self.live, limit, |expiry| *expiry <= before)
    }

    /// Records `key` until `expires_at`: true when it was not recorded (or only by a record
    /// expired at `now`), false for a replay.
    fn record_once(&mut self, key: K, now: OffsetDateTime, expires_at: OffsetDateTime) -> bool {
        while let Some((expiry, _)) = self.queue.front()
            && *expiry <= now
        {
            if let Some((expiry, key)) = self.queue.pop_front()
                && self.live.get(&key) == Some(&expiry)
            {
                self.live.remove(&key);
            }
        }
        if self.live.get(&key).is_some_and(|expiry| *expiry > now) {
            return false;
        }
        self.live.insert(key.clone(), expires_at);
        self.queue.push_back((expires_at, key));
        true
    }
}

/// Records or withdraws one like in `likes` and keeps the item's `count` in step: liking again,
/// or withdrawing a like that is not there, changes nothing.
fn set_like<K: Eq + Hash>(likes: &mut HashSet<K>, like: K, liked: bool, count: &mut i64) {
    let changed = if liked {
        likes.insert(like)
    } else {
        likes.remove(&like)
    };
    if changed {
        *count += if liked { 1 } else { -1 };
    }
}

/// Removes at most `limit` entries of `map` that are `dead`; returns how many.
fn prune_map<K: Eq + Hash + Clone, V>(
    map: &mut HashMap<K, V>,
    limit: u32,
    dead: impl Fn(&V) -> bool,
) -> u64 {
    let keys: Vec<K> = map
        .iter()
        .filter(|(_, value)| dead(value))
        .map(|(key, _)| key.clone())
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .collect();
    for key in &keys {
        map.remove(key);
    }
    keys.len() as u64
}

/// A prune of one table: a batch under the store's lock.
type Prune = fn(&mut State, OffsetDateTime, u32) -> u64;

struct MemoryPrune {
    store: Store,
    prune: Prune,
}

#[async_trait::async_trait]
impl PruneBatch for MemoryPrune {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn prune_batch(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        Ok((self.prune)(&mut self.store.lock(), before, limit))
    }
}

/// What the store prunes: the same jobs as PostgreSQL's (`deckhand_postgres::pruning`).
#[rustfmt::skip]
fn prune_jobs(store: &Store) -> Vec<PruneJob> {
    let job = |name: &'static str, kept: Kept, prune: Prune| {
        PruneJob::new(
            name,
            kept,
            MemoryPrune {
                store: store.clone(),
                prune,
            },
        )
    };
    vec![
        job("authorization codes", Kept::UntilExpiry, oauth::prune_codes),
        job("sign-in sessions", Kept::UntilExpiry, oauth::prune_sessions),
        job("expired access tokens", Kept::AfterExpiry, oauth::prune_expired_access_tokens),
        job("revoked access tokens", Kept::AfterRevocation, oauth::prune_revoked_access_tokens),
        job("expired refresh tokens", Kept::UntilExpiry, oauth::prune_expired_refresh_tokens),
        job("refresh tokens of revoked grants", Kept::AfterRevocation, oauth::prune_revoked_refresh_tokens),
        job("grants without tokens", Kept::UntilExpiry, oauth::prune_grants_without_tokens),
        job("DPoP proof ids", Kept::UntilExpiry, oauth::prune_dpop_proofs),
        job("sign-in failures", Kept::SignInWindow, oauth::prune_sign_in_failures),
        job("signature replays", Kept::UntilExpiry, partners::prune_signature_replays),
        job("idempotency records", Kept::UntilExpiry, idempotency::prune_keys),
        job("pageview dedupe", Kept::PageviewWindow, decks::prune_views),
    ]
}

/// Every repository over one fresh, empty store.
pub fn repositories() -> Repositories {
    let store = Store::default();
    let events: Arc<dyn EventRepository> = Arc::new(events::MemoryEvents(store.clone()));
    let mut prune_jobs = prune_jobs(&store);
    prune_jobs.push(PruneJob::new(
        "events",
        Kept::EventRetention,
        PastRetention(events.clone()),
    ));
    let webhooks: Arc<dyn WebhookRepository> = Arc::new(webhooks::MemoryWebhooks(store.clone()));
    prune_jobs.push(PruneJob::new(
        "webhook deliveries",
        Kept::For(DELIVERY_RETENTION),
        EndedDeliveries(webhooks.clone()),
    ));
    Repositories {
        users: Arc::new(identity::MemoryUsers(store.clone())),
        pats: Arc::new(identity::MemoryPats(store.clone())),
        decks: Arc::new(decks::MemoryDecks(store.clone())),
        sideboard_guides: Arc::new(sideboards::MemorySideboardGuides(store.clone())),
        partners: Arc::new(partners::MemoryPartners(store.clone())),
        api_keys: Arc::new(partners::MemoryApiKeys(store.clone())),
        signature_replays: Arc::new(partners::MemorySignatureReplays(store.clone())),
        oauth: Arc::new(oauth::MemoryOAuth(store.clone())),
        health: Arc::new(health::MemoryHealth),
        catalog: Arc::new(catalog::MemoryCatalog(store.clone())),
        idempotency_keys: Arc::new(idempotency::MemoryIdempotencyKeys(store.clone())),
        events,
        prune_jobs,
        webhooks,
        collections: Arc::new(collections::MemoryCollections(store.clone())),
    }
}
