//! Reading the feed.

use std::sync::Arc;
use std::time::Duration;

use crate::catalog::Game;
use crate::identity::Principal;
use crate::system::Clock;

use super::cursor::Cursor;
use super::ports::EventRepository;
use super::query::{FeedPage, FeedQuery, FeedReader, TypeFilter};

#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The cursor points before the oldest retained event.
    #[error("the cursor is older than the retained events")]
    CursorExpired,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// A feed request, validated at the edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedRequest {
    pub after: Option<Cursor>,
    pub types: TypeFilter,
    pub limit: u32,
    /// How long to hold the request while nothing new is readable.
    pub wait: Duration,
}

#[derive(Clone)]
pub struct EventService {
    events: Arc<dyn EventRepository>,
    clock: Arc<dyn Clock>,
    retention: time::Duration,
}

/// How many events one pruning statement deletes at most, so it never holds locks long.
pub const PRUNE_BATCH: u32 = 1000;

impl EventService {
    pub fn new(
        events: Arc<dyn EventRepository>,
        clock: Arc<dyn Clock>,
        retention: time::Duration,
    ) -> Self {
        Self {
            events,
            clock,
            retention,
        }
    }

    /// Deletes one batch of events older than the retention; how many (fewer than a batch:
    /// nothing older is left).
    pub async fn prune_batch(&self) -> anyhow::Result<u64> {
        let before = self.clock.now() - self.retention;
        self.events.prune(before, PRUNE_BATCH).await
    }

    /// A page of `game`'s feed as `principal` may read it now. With a wait and nothing new,
    /// holds on until something readable commits or the wait is over.
    #[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
    pub async fn feed(
        &self,
        principal: &Principal,
        game: &Game,
        request: FeedRequest,
    ) -> Result<FeedPage, EventError> {
        let mut query = FeedQuery {
            game: game.slug.clone(),
            after: request.after.unwrap_or(Cursor::START),
            types: request.types,
            limit: request.limit,
            reader: FeedReader::of(principal),
        };
        let deadline = self.clock.now() + request.wait;
        loop {
            let scan = self.events.scan(&query).await?;
            let page = scan.page(&query).ok_or(EventError::CursorExpired)?;
            let remaining = deadline - self.clock.now();
            if !page.events.is_empty() || page.has_more || remaining <= time::Duration::ZERO {
                return Ok(page);
            }
            // Nothing readable yet: everything up to `page.next` has been looked at.
            query.after = page.next;
            let remaining = Duration::try_from(remaining).unwrap_or_default();
            self.events
                .wait_for_news(page.next.sequence, remaining)
                .await?;
        }
    }
}
