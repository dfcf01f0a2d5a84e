//! The event log port. See the crate's error contract in [`crate::ports`].
//!
//! Events are written by the other repositories, each in the transaction of the change it
//! records (their write methods take the [`super::EventRecord`]); this port reads them back.
//! The log numbers events in commit order: a reader that has been handed every event up to a
//! sequence never later finds a committed event below it.

use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use uuid::Uuid;

use super::model::{Event, EventType, SubjectKind};
use super::query::{FeedQuery, FeedScan, JudgedEvent, SubjectAccess};

/// A committed event as the store announces it, before anyone reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Announcement {
    pub sequence: i64,
    pub game: String,
    pub event_type: EventType,
    /// The event itself, judged as its commit left its subject and the deck it names, when the
    /// store announces it whole and heard it within [`super::BATCH_FRESH_FOR`]: then the waits it
    /// wakes need not read it.
    pub judged: Option<JudgedEvent>,
}

/// What a store heard after a sequence ([`EventRepository::wait_for_news`]).
#[derive(Debug, Clone, PartialEq)]
pub enum News {
    /// Nothing within the time.
    Quiet,
    /// Every event committed after the sequence so far, ascending and without a gap.
    Heard(Vec<Announcement>),
    /// The store cannot say what came (its listener reconnected, or the announcements are
    /// forgotten): the reader reads the feed again.
    Unknown,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait EventRepository: Send + Sync {
    /// The events of `query.game` after `query.after`, in ascending sequence: at most
    /// [`super::FEED_SCAN_WINDOW`] looked at, whatever their type, and of those the first
    /// `query.limit + 1` of the wanted types that `query.reader` may read, judged on the
    /// subjects as they are now.
    /// One snapshot.
    async fn scan(&self, query: &FeedQuery) -> anyhow::Result<FeedScan>;

    /// Returns once an event after `sequence` has committed (in any game), with what was heard
    /// ([`News::Heard`]: every event after `sequence`, announced with its game and type), or
    /// [`News::Quiet`] after `timeout`, or [`News::Unknown`] when the store cannot tell. Woken
    /// by the store, never by polling it; reads nothing of the log itself, except on a replica
    /// catching up with what the primary announced.
    async fn wait_for_news(&self, sequence: i64, timeout: Duration) -> anyhow::Result<News>;

    /// Every event after `after` through `through`, of every game, with the read state now of
    /// its subject and of the deck its `data` names: one read, which every held wait woken by
    /// the same news shares ([`super::WaitRoom`]).
    async fn judged(&self, after: i64, through: i64) -> anyhow::Result<Vec<JudgedEvent>>;

    /// The read state of a deck or guide now (`None`: there is none such), for judging one
    /// event the way the feed would (webhook delivery).
    async fn subject(&self, kind: SubjectKind, id: Uuid) -> anyhow::Result<Option<SubjectAccess>>;

    /// Every event after `sequence` in ascending order, at most `limit`, whatever its game or
    /// subject: what webhook dispatch reads.
    async fn after(&self, sequence: i64, limit: u32) -> anyhow::Result<Vec<Event>>;

    /// Deletes at most `limit` events that occurred before `before`, oldest first, and
    /// remembers the highest sequence deleted (cursors before it are expired); how many.
    async fn prune(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64>;
}

/// The log's pruning as a prune job's batch (`pruning`): events older than the retention,
/// oldest first.
pub struct PastRetention(pub std::sync::Arc<dyn EventRepository>);

#[async_trait]
impl crate::pruning::PruneBatch for PastRetention {
    async fn prune_batch(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        self.0.prune(before, limit).await
    }
}
