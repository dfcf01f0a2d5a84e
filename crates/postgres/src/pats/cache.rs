//! Personal access tokens found by their hash, with their users, held in process. A PAT
//! request's lookup was a round trip of its own before the request's work
//! (docs/benchmarks/history.md, "Seventh pass"); a token and its user change only when an operator revokes the token or
//! deactivates the user.
//!
//! Kept exact as the catalog's copy is (`catalog::cache`): statement triggers on
//! `personal_access_tokens` and `users` (migration `2026-11-25-000500_credentials_notify`)
//! notify `deckhand_credentials` when a change commits, every instance listens and drops its
//! copy, a change through this instance drops it at once, and while the listener is not
//! connected every lookup reads the database. Only tokens found are kept, so a token created
//! anywhere works at once; expiry is checked on every request from the kept `expires_at`.

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use deckhand_auth::TokenHash;
use deckhand_domain::identity::{PersonalAccessToken, User};

use crate::listener::{self, Invalidate, Listener};

/// The channel the triggers notify.
const CHANNEL: &str = "deckhand_credentials";
/// Tokens kept at most; the least used go first.
const CAPACITY: u64 = 10_000;
/// How long a kept token may go unread from the database even with no notification: a bound
/// for changes made with triggers switched off (`session_replication_role = replica`).
const TIME_TO_LIVE: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
struct State {
    /// Bumped by every invalidation, so a lookup that raced one is not kept.
    generation: u64,
    /// Whether the listener is connected: only then is a copy trustworthy.
    listening: bool,
}

/// What the copy knows of a token.
pub(super) enum Cached {
    Found(Arc<(PersonalAccessToken, User)>),
    /// Read it from the database; [`PatCache::keep`] it with this generation.
    Unknown {
        generation: u64,
    },
}

pub(crate) struct PatCache {
    /// The repositories' listening connection.
    listen: Listener,
    state: Mutex<State>,
    found: moka::sync::Cache<[u8; 32], Arc<(PersonalAccessToken, User)>>,
    listener: OnceLock<()>,
}

impl PatCache {
    pub(crate) fn new(listen: Listener) -> Arc<Self> {
        Arc::new(Self {
            listen,
            state: Mutex::new(State::default()),
            found: moka::sync::Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(TIME_TO_LIVE)
                .build(),
            listener: OnceLock::new(),
        })
    }

    /// The token with `hash` and its user, when the copy has them.
    pub(super) fn lookup(self: &Arc<Self>, hash: &TokenHash) -> Cached {
        self.listener.get_or_init(|| {
            self.listen
                .subscribe(CHANNEL, Arc::downgrade(self) as Weak<Self>);
        });
        let state = self.lock();
        match self.found.get(hash.as_bytes()) {
            Some(found) if state.listening => Cached::Found(found),
            _ => Cached::Unknown {
                generation: state.generation,
            },
        }
    }

    /// Keeps what the database answered for `hash`, unless a change may have come since.
    pub(super) fn keep(
        &self,
        hash: &TokenHash,
        found: &(PersonalAccessToken, User),
        generation: u64,
    ) {
        // Under the lock, so that no invalidation falls between the check and the insert.
        let state = self.lock();
        if state.listening && state.generation == generation {
            self.found.insert(*hash.as_bytes(), Arc::new(found.clone()));
        }
    }

    /// Drops every token after this instance changed a user, without waiting for the
    /// notification.
    pub(crate) fn forget(&self) {
        self.clear(&mut self.lock());
    }

    fn clear(&self, state: &mut State) {
        state.generation += 1;
        self.found.invalidate_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        listener::lock_state(&self.state)
    }
}

impl Invalidate for PatCache {
    fn invalidate(&self, listening: bool) {
        let mut state = self.lock();
        self.clear(&mut state);
        state.listening = listening;
    }
}
