//! Events: the record of every committed change, written by the stores in the same transaction
//! as the change, numbered in commit order, and read back through a feed that decides at read
//! time, with the resource endpoints' own rule, what each caller may see.
//!
//! Which change makes which event, with what `data`, is decided beside each change
//! (`decks::events`, `sideboards::events`, the catalog's import); the stores only write the
//! [`EventRecord`] they are handed and number it.

mod cursor;
mod model;
pub mod ports;
mod query;
mod service;
mod waits;

pub use cursor::{Cursor, MalformedCursor};
pub use model::{Actor, Event, EventId, EventRecord, EventType, Origin, SubjectKind};
pub use ports::{Announcement, News};
pub use query::{
    DEFAULT_FEED_LIMIT, FEED_SCAN_WINDOW, FeedPage, FeedQuery, FeedReader, FeedScan, JudgedEvent,
    MAX_FEED_LIMIT, MAX_FEED_WAIT, ReadableEvent, SubjectAccess, TypeFilter, UnknownEventType,
};
pub use service::{EventError, EventService, FeedRequest};
pub use waits::{
    BATCH_FRESH_FOR, DEFAULT_MAX_WAITERS, NewsBatch, WAITS_PER_CALLER, WaitLimits, WaitPermit,
    WaitRoom, Waiter,
};

#[cfg(test)]
mod tests;
