//! Reading the feed.

use std::sync::Arc;
use std::time::Duration;

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
}

impl EventService {
    pub fn new(events: Arc<dyn EventRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { events, clock }
    }

    /// A page of `game`'s feed as `principal` may read it now. With a wait and nothing new,
    /// holds on until something readable commits or the wait is over.
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
        loop {
            let page = self
                .events
                .scan(&query)
                .await?
                .page(&query)
                .ok_or(EventError::CursorExpired)?;
            let remaining = deadline - self.clock.now();
            if !page.events.is_empty() || page.has_more || remaining <= time::Duration::ZERO {
                return Ok(page);
            }
            // Nothing readable yet: everything up to `page.next` has been looked at.
            query.after = Some(page.next);
            let remaining = Duration::try_from(remaining).unwrap_or_default();
            self.events
                .wait_for_news(page.next.sequence, remaining)
                .await?;
        }
    }
}
