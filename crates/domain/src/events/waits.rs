//! Held feed requests (`wait`), kept fair (contract "Events", "Fair share"; docs/events.md):
//!
//! - **Bounded.** A caller holds at most [`WaitLimits::per_caller`] waits on an instance, and
//!   the instance at most [`WaitLimits::per_instance`]; a request past either is answered at
//!   once, as with `wait=0`. A [`WaitPermit`] counts one held wait for as long as it lives, so
//!   a request whose client has gone (actix drops its future) gives its place back at once.
//! - **Woken by what it wants.** The store announces each committed event with its game and
//!   type ([`News`]); a wait reads nothing for news of another game or of types it did not ask
//!   for.
//! - **One read per news, whatever the number of waits.** The waits woken by the same news
//!   share one read of the new events, judged once for every reader ([`NewsBatch`]): each wait
//!   then picks what its own reader may see in memory. What a commit costs the database is one
//!   statement per instance with a wait that wants it, not one per wait.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::lock::Mutex as AsyncMutex;
use time::OffsetDateTime;

use crate::identity::{Principal, UserId};

use super::ports::{Announcement, EventRepository};
use super::query::{FEED_SCAN_WINDOW, FeedPage, FeedQuery, FeedScan, JudgedEvent};

/// How many waits a caller may hold on one instance.
pub const WAITS_PER_CALLER: u32 = 4;
/// How many waits one instance holds at most, unless `DECKHAND_FEED_MAX_WAITERS` says otherwise.
pub const DEFAULT_MAX_WAITERS: u32 = 1000;

/// The bounds on held waits of one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitLimits {
    pub per_caller: u32,
    pub per_instance: u32,
}

impl Default for WaitLimits {
    fn default() -> Self {
        Self {
            per_caller: WAITS_PER_CALLER,
            per_instance: DEFAULT_MAX_WAITERS,
        }
    }
}

/// Who a held wait counts against: the user a request acts for, else its partner.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Waiter {
    User(UserId),
    Partner(String),
}

impl Waiter {
    /// `None` for a caller who is neither (the feed refuses anonymous callers before this).
    pub fn of(principal: &Principal) -> Option<Self> {
        match (&principal.user, &principal.partner) {
            (Some(user), _) => Some(Self::User(user.id)),
            (None, Some(partner)) => Some(Self::Partner(partner.slug.clone())),
            (None, None) => None,
        }
    }
}

/// The held waits of one instance, and the read the waits woken by the same news share.
#[derive(Debug, Default)]
pub struct WaitRoom {
    limits: WaitLimits,
    held: Mutex<Held>,
    latest: AsyncMutex<Option<Arc<NewsBatch>>>,
}

#[derive(Debug, Default)]
struct Held {
    total: u32,
    by_waiter: HashMap<Waiter, u32>,
}

impl WaitRoom {
    pub fn new(limits: WaitLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// A place for one more wait of `waiter`, or `None` when it or the instance holds all it may.
    pub fn admit(self: &Arc<Self>, waiter: Waiter) -> Option<WaitPermit> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.total >= self.limits.per_instance {
            return None;
        }
        let mine = held.by_waiter.entry(waiter.clone()).or_default();
        if *mine >= self.limits.per_caller {
            return None;
        }
        *mine += 1;
        held.total += 1;
        Some(WaitPermit {
            room: self.clone(),
            waiter,
        })
    }

    /// How many waits are held now.
    pub fn held(&self) -> u32 {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    fn release(&self, waiter: &Waiter) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.total = held.total.saturating_sub(1);
        if let Some(mine) = held.by_waiter.get_mut(waiter) {
            *mine -= 1;
            if *mine == 0 {
                held.by_waiter.remove(waiter);
            }
        }
    }

    /// The events after `after` through `through`, judged: from the batch read last when it
    /// covers them (the waits woken by one news share it), else read now (only what the last
    /// batch lacks, when it runs up to `after`), for later waits to share. A batch serves for
    /// [`BATCH_FRESH_FOR`] after its oldest read, so that no wait lists an event by a judgment
    /// older than that. `None` when there are too many to judge in one read, or the store did
    /// not show them all (a replica behind, a pruned cursor): the wait reads the feed itself.
    pub async fn batch(
        &self,
        events: &dyn EventRepository,
        after: i64,
        through: i64,
        now: OffsetDateTime,
    ) -> anyhow::Result<Option<Arc<NewsBatch>>> {
        if through - after > i64::from(FEED_SCAN_WINDOW) {
            return Ok(None);
        }
        let mut latest = self.latest.lock().await;
        let fresh = latest
            .as_ref()
            .filter(|batch| now - batch.read_at < BATCH_FRESH_FOR && batch.after <= after);
        if let Some(batch) = fresh.filter(|batch| through <= batch.through) {
            return Ok(Some(batch.clone()));
        }
        let extended = fresh.filter(|batch| {
            after <= batch.through && through - batch.after <= i64::from(FEED_SCAN_WINDOW)
        });
        let (from, mut judged, read_at) = match extended {
            Some(batch) => (batch.through, batch.events.clone(), batch.read_at),
            None => (after, Vec::new(), now),
        };
        let start = extended.map_or(after, |batch| batch.after);
        judged.extend(events.judged(from, through).await?);
        let whole = judged
            .iter()
            .map(|judged| judged.event.sequence)
            .eq(start + 1..=through);
        if !whole {
            return Ok(None);
        }
        let batch = Arc::new(NewsBatch {
            after: start,
            through,
            events: judged,
            read_at,
        });
        *latest = Some(batch.clone());
        Ok(Some(batch))
    }
}

/// How long a read of new events serves the waits it covers.
pub const BATCH_FRESH_FOR: time::Duration = time::Duration::seconds(1);

/// One held wait, counted until it is dropped.
#[derive(Debug)]
pub struct WaitPermit {
    room: Arc<WaitRoom>,
    waiter: Waiter,
}

impl Drop for WaitPermit {
    fn drop(&mut self) {
        self.room.release(&self.waiter);
    }
}

/// Every event after `after` through `through`, of every game, judged once for any reader.
#[derive(Debug, Clone, PartialEq)]
pub struct NewsBatch {
    after: i64,
    through: i64,
    events: Vec<JudgedEvent>,
    /// When its oldest part was read.
    read_at: OffsetDateTime,
}

impl NewsBatch {
    /// The batch the announcements after `after` make by themselves, when every one of them
    /// carries its judged event ([`Announcement::judged`]): nothing to read.
    pub fn announced(after: i64, heard: &[Announcement], now: OffsetDateTime) -> Option<Self> {
        let events = heard
            .iter()
            .map(|news| news.judged.clone())
            .collect::<Option<Vec<JudgedEvent>>>()?;
        let through = heard.last().map_or(after, |news| news.sequence);
        let whole = events
            .iter()
            .map(|judged| judged.event.sequence)
            .eq(after + 1..=through);
        whole.then_some(Self {
            after,
            through,
            events,
            read_at: now,
        })
    }

    /// The page `query` (whose cursor lies within the batch) reads from this batch: the same
    /// page a feed statement would give, by the same rule ([`FeedScan::page`]).
    pub fn page(&self, query: &FeedQuery) -> Option<FeedPage> {
        let after = query.after.map_or(self.after, |cursor| cursor.sequence);
        let looked_at: Vec<&JudgedEvent> = self
            .events
            .iter()
            .filter(|judged| {
                judged.event.sequence > after && judged.event.record.game == query.game
            })
            .collect();
        let readable = looked_at
            .iter()
            .filter_map(|judged| judged.listed_to(query))
            .take(query.limit as usize + 1)
            .collect();
        FeedScan {
            readable,
            scanned: u32::try_from(looked_at.len()).unwrap_or(FEED_SCAN_WINDOW),
            scanned_through: looked_at.last().map(|judged| judged.event.sequence),
            last_sequence: self.through,
            pruned_through: self.after.min(after),
        }
        .page(query)
    }
}
