//! Reading the feed.

use std::sync::Arc;
use std::time::Duration;

use crate::identity::Principal;
use crate::system::Clock;

use super::cursor::Cursor;
use super::ports::{EventRepository, News};
use super::query::{FeedPage, FeedQuery, FeedReader, TypeFilter};
use super::waits::{NewsBatch, WaitLimits, WaitRoom, Waiter};

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
    waits: Arc<WaitRoom>,
}

impl EventService {
    pub fn new(
        events: Arc<dyn EventRepository>,
        clock: Arc<dyn Clock>,
        limits: WaitLimits,
    ) -> Self {
        Self {
            events,
            clock,
            waits: Arc::new(WaitRoom::new(limits)),
        }
    }

    /// This service counting its held waits with `other`'s: the services of every database of
    /// one instance share one room, so the limits are the instance's.
    pub fn sharing_waits_with(mut self, other: &Self) -> Self {
        self.waits = other.waits.clone();
        self
    }

    /// How many feed requests are held now on this instance.
    pub fn held_waits(&self) -> u32 {
        self.waits.held()
    }

    /// A page of `game`'s feed as `principal` may read it now. With a wait and nothing new,
    /// holds on until something readable commits or the wait is over, within the caller's and
    /// the instance's share of held waits (past it, answers at once).
    #[tracing::instrument(level = "debug", skip_all, fields(game))]
    pub async fn feed(
        &self,
        principal: &Principal,
        game: &str,
        request: FeedRequest,
    ) -> Result<FeedPage, EventError> {
        let mut query = FeedQuery {
            game: game.to_owned(),
            after: request.after,
            types: request.types,
            limit: request.limit,
            reader: FeedReader::of(principal),
        };
        let deadline = self.clock.now() + request.wait;
        let held = if request.wait.is_zero() {
            None
        } else {
            Waiter::of(principal).and_then(|waiter| self.waits.admit(waiter))
        };
        let Some(_held) = held else {
            return self.read(&query).await;
        };
        // A held request with a cursor starts with the news after it (the store's own, or one
        // read the waits share) rather than a feed statement of its own: a client polling with
        // the cursor it was handed costs nothing until there is news for it.
        let mut next = match query.after {
            Some(cursor) => cursor,
            None => {
                let page = self.read(&query).await?;
                if !page.events.is_empty() || page.has_more {
                    return Ok(page);
                }
                // Nothing readable yet: everything up to `next` has been looked at.
                page.next
            }
        };
        loop {
            let remaining = deadline - self.clock.now();
            if remaining <= time::Duration::ZERO {
                return Ok(FeedPage::nothing_new(next));
            }
            let remaining = Duration::try_from(remaining).unwrap_or_default();
            query.after = Some(next);
            let page = match self.events.wait_for_news(next.sequence, remaining).await? {
                News::Quiet => return Ok(FeedPage::nothing_new(next)),
                News::Unknown => self.read(&query).await?,
                News::Heard(heard) => {
                    let Some(through) = heard.last().map(|news| news.sequence) else {
                        continue;
                    };
                    let wanted = heard
                        .iter()
                        .any(|news| news.game == game && query.types.admits(news.event_type));
                    if !wanted {
                        next = Cursor { sequence: through };
                        continue;
                    }
                    let now = self.clock.now();
                    let batch = match NewsBatch::announced(next.sequence, &heard, now) {
                        Some(announced) => Some(Arc::new(announced)),
                        None => {
                            self.waits
                                .batch(&*self.events, next.sequence, through, now)
                                .await?
                        }
                    };
                    match batch {
                        Some(batch) => batch.page(&query).ok_or(EventError::CursorExpired)?,
                        None => self.read(&query).await?,
                    }
                }
            };
            if !page.events.is_empty() || page.has_more {
                return Ok(page);
            }
            next = page.next;
        }
    }

    /// One feed statement: the page `query` reads now.
    async fn read(&self, query: &FeedQuery) -> Result<FeedPage, EventError> {
        self.events
            .scan(query)
            .await?
            .page(query)
            .ok_or(EventError::CursorExpired)
    }
}
