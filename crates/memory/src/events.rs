//! The event log in memory. Events are numbered under the store's mutex, in the same section
//! as the change they record, so commit order and sequence order are one; a watch channel wakes
//! the feed readers waiting for news.

use std::collections::VecDeque;
use std::time::Duration;

use async_trait::async_trait;
use deckhand_domain::events::ports::EventRepository;
use deckhand_domain::events::{
    Announcement, Event, EventRecord, FEED_SCAN_WINDOW, FeedQuery, FeedScan, JudgedEvent, News,
    SubjectAccess, SubjectKind,
};
use time::OffsetDateTime;
use tokio::sync::watch;
use uuid::Uuid;

use crate::{State, Store};

#[derive(Debug)]
pub(crate) struct Tables {
    log: VecDeque<Event>,
    last_sequence: i64,
    pruned_through: i64,
    news: watch::Sender<i64>,
}

impl Default for Tables {
    fn default() -> Self {
        Self {
            log: VecDeque::new(),
            last_sequence: 0,
            pruned_through: 0,
            news: watch::Sender::new(0),
        }
    }
}

impl Tables {
    /// Every event after `sequence`, ascending, at most `limit` (webhook dispatch).
    pub(crate) fn after(&self, sequence: i64, limit: u32) -> Vec<Event> {
        self.log
            .iter()
            .filter(|event| event.sequence > sequence)
            .take(limit as usize)
            .cloned()
            .collect()
    }

    /// The sequence of each event as it is written.
    pub(crate) fn news(&self) -> watch::Receiver<i64> {
        self.news.subscribe()
    }

    /// Writes `record` as the next event: called in the section that makes its change.
    pub(crate) fn record(&mut self, record: &EventRecord) {
        self.last_sequence += 1;
        self.log.push_back(Event {
            sequence: self.last_sequence,
            record: record.clone(),
        });
        self.news.send_replace(self.last_sequence);
    }
}

/// The read state of a subject now.
fn subject(state: &State, kind: SubjectKind, id: Uuid) -> Option<SubjectAccess> {
    match kind {
        SubjectKind::Deck => state
            .decks
            .deck(deckhand_domain::decks::DeckId(id))
            .map(|deck| SubjectAccess {
                visibility: deck.content.visibility,
                owner: deck.facts.author.id,
                is_archived: deck.is_archived,
            }),
        SubjectKind::SideboardGuide => state
            .sideboards
            .guide(deckhand_domain::sideboards::GuideId(id))
            .map(|guide| SubjectAccess {
                visibility: guide.content.visibility,
                owner: guide.author.id,
                is_archived: guide.is_archived,
            }),
        SubjectKind::Catalog => None,
        // A collection is its owner's, and never goes away.
        SubjectKind::Collection => Some(SubjectAccess::collection(
            deckhand_domain::identity::UserId(id),
        )),
    }
}

/// `event` with the read state now of its subject and of the deck its `data` names.
fn judged(state: &State, event: &Event) -> JudgedEvent {
    let record = &event.record;
    JudgedEvent {
        event: event.clone(),
        subject: record
            .subject_id
            .and_then(|id| subject(state, record.subject_kind(), id)),
        named: record
            .named_deck()
            .and_then(|id| subject(state, SubjectKind::Deck, id)),
    }
}

pub(crate) struct MemoryEvents(pub(crate) Store);

#[async_trait]
impl EventRepository for MemoryEvents {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn scan(&self, query: &FeedQuery) -> anyhow::Result<FeedScan> {
        let state = self.0.lock();
        let events = &state.events;
        let after = query
            .after
            .map_or(events.pruned_through, |cursor| cursor.sequence);
        let scanned: Vec<&Event> = events
            .log
            .iter()
            .filter(|event| event.sequence > after && event.record.game == query.game)
            .take(FEED_SCAN_WINDOW as usize)
            .collect();
        let readable = scanned
            .iter()
            .filter_map(|event| judged(&state, event).listed_to(query))
            .take(query.limit as usize + 1)
            .collect();
        Ok(FeedScan {
            readable,
            scanned: u32::try_from(scanned.len()).unwrap_or(FEED_SCAN_WINDOW),
            scanned_through: scanned.last().map(|event| event.sequence),
            last_sequence: events.last_sequence,
            pruned_through: events.pruned_through,
        })
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn wait_for_news(&self, sequence: i64, timeout: Duration) -> anyhow::Result<News> {
        let mut news = self.0.lock().events.news.subscribe();
        if tokio::time::timeout(timeout, news.wait_for(|last| *last > sequence))
            .await
            .is_err()
        {
            return Ok(News::Quiet);
        }
        let state = self.0.lock();
        let events = &state.events;
        if sequence < events.pruned_through {
            return Ok(News::Unknown);
        }
        let mut heard: Vec<Announcement> = events
            .log
            .iter()
            .rev()
            .take_while(|event| event.sequence > sequence)
            .map(|event| Announcement {
                sequence: event.sequence,
                game: event.record.game.clone(),
                event_type: event.record.event_type,
                judged: None,
            })
            .collect();
        heard.reverse();
        Ok(News::Heard(heard))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn judged(&self, after: i64, through: i64) -> anyhow::Result<Vec<JudgedEvent>> {
        let state = self.0.lock();
        Ok(state
            .events
            .log
            .iter()
            .filter(|event| event.sequence > after && event.sequence <= through)
            .map(|event| judged(&state, event))
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn subject(&self, kind: SubjectKind, id: Uuid) -> anyhow::Result<Option<SubjectAccess>> {
        Ok(subject(&self.0.lock(), kind, id))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn after(&self, sequence: i64, limit: u32) -> anyhow::Result<Vec<Event>> {
        let state = self.0.lock();
        Ok(state
            .events
            .log
            .iter()
            .filter(|event| event.sequence > sequence)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn prune(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        let mut state = self.0.lock();
        let events = &mut state.events;
        let mut pruned = 0;
        while pruned < u64::from(limit)
            && let Some(oldest) = events.log.front()
            && oldest.record.occurred_at < before
        {
            events.pruned_through = events.pruned_through.max(oldest.sequence);
            events.log.pop_front();
            pruned += 1;
        }
        Ok(pruned)
    }
}
