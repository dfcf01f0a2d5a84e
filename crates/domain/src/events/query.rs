use std::collections::BTreeSet;
use std::time::Duration;

use crate::identity::{Principal, Scope, UserId};
use crate::readable::{Readable, Visibility};

use super::cursor::Cursor;
use super::model::{Event, EventType, SubjectKind};

pub const DEFAULT_FEED_LIMIT: u32 = 100;
pub const MAX_FEED_LIMIT: u32 = 100;
/// The longest a feed request may wait for news.
pub const MAX_FEED_WAIT: Duration = Duration::from_secs(30);
/// How many events of the game one feed page looks at, of the wanted types and readable or
/// not (so a filter on a rare type never walks the whole log).
/// A caller who may read few of them still gets an answer at once: the cursor moves past what
/// was looked at, and `has_more` says there is more to look at.
pub const FEED_SCAN_WINDOW: u32 = 1000;

/// A `types` entry that names no event type, or a prefix no type starts with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown event type {0:?}")]
pub struct UnknownEventType(pub String);

/// The event types a reader asks for: every feed type, or those named exactly or by a prefix
/// ending in `.*` (`deck.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeFilter(Option<BTreeSet<EventType>>);

impl TypeFilter {
    pub fn all() -> Self {
        Self(None)
    }

    /// Comma-separated names and prefixes; an empty list means every type.
    pub fn parse(list: &str) -> Result<Self, UnknownEventType> {
        let mut wanted = BTreeSet::new();
        for entry in list
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
        {
            let matching: Vec<EventType> = match entry.strip_suffix('*') {
                Some(prefix) if prefix.ends_with('.') => EventType::in_feed()
                    .filter(|kind| kind.as_str().starts_with(prefix))
                    .collect(),
                _ => EventType::in_feed()
                    .filter(|kind| kind.as_str() == entry)
                    .collect(),
            };
            if matching.is_empty() {
                return Err(UnknownEventType(entry.to_owned()));
            }
            wanted.extend(matching);
        }
        Ok(Self((!wanted.is_empty()).then_some(wanted)))
    }

    pub fn admits(&self, kind: EventType) -> bool {
        kind != EventType::WebhookPing && self.0.as_ref().is_none_or(|types| types.contains(&kind))
    }

    /// The types to list, when the filter names some; `None` for every feed type.
    pub fn named(&self) -> Option<Vec<EventType>> {
        self.0.as_ref().map(|types| types.iter().copied().collect())
    }
}

/// The read state of an event's subject now: what the read rule needs of a deck or a guide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubjectAccess {
    pub visibility: Visibility,
    pub owner: UserId,
    pub is_archived: bool,
}

impl SubjectAccess {
    /// A collection's read state: private to its owner, never archived.
    pub const fn collection(owner: UserId) -> Self {
        Self {
            visibility: Visibility::Private,
            owner,
            is_archived: false,
        }
    }
}

/// Who reads the feed: an event is theirs when they could read its subject through the
/// resource endpoints now (by id: archived subjects stay readable) and hold the read scope of
/// its kind; catalog events are everyone's. Missing scopes leave events out, never refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedReader {
    pub viewer: Option<UserId>,
    pub deck_events: bool,
    pub guide_events: bool,
    /// The user whose collection events are listed: a caller with a user identity (a partner
    /// acting alone has no collection) and `collection:read`; `None` lists none.
    pub collection_viewer: Option<UserId>,
}

impl FeedReader {
    /// The reader a principal is, with the viewer the resource endpoints use for it.
    pub fn of(principal: &Principal) -> Self {
        Self {
            viewer: principal.acting_user(),
            deck_events: principal.scopes.contains(Scope::DecksRead),
            guide_events: principal.scopes.contains(Scope::SideboardsRead),
            collection_viewer: principal
                .user
                .as_ref()
                .filter(|_| principal.scopes.contains(Scope::CollectionRead))
                .map(|user| user.id),
        }
    }

    /// The read rule subjects are judged by.
    pub fn rule(self) -> Readable {
        Readable::by_id(self.viewer)
    }

    /// Whether events of `kind` are listed at all to this reader (its scopes).
    pub fn reads(self, kind: SubjectKind) -> bool {
        match kind {
            SubjectKind::Deck => self.deck_events,
            SubjectKind::SideboardGuide => self.guide_events,
            SubjectKind::Catalog => true,
            SubjectKind::Collection => self.collection_viewer.is_some(),
        }
    }

    /// Whether an id of a deck or guide named inside an event's `data`, whose read state is now
    /// `named` (`None`: gone), is shown to this reader; hidden ids are `null`.
    pub fn sees_named(self, named: Option<SubjectAccess>) -> bool {
        named.is_some_and(|named| {
            self.rule()
                .admits(named.visibility, named.owner, named.is_archived)
        })
    }

    /// Whether an event of `kind` whose subject is now `subject` (`None`: gone) is listed.
    pub fn admits(self, kind: SubjectKind, subject: Option<SubjectAccess>) -> bool {
        self.reads(kind)
            && match kind {
                SubjectKind::Catalog => true,
                SubjectKind::Deck | SubjectKind::SideboardGuide => subject.is_some_and(|subject| {
                    self.rule()
                        .admits(subject.visibility, subject.owner, subject.is_archived)
                }),
                SubjectKind::Collection => subject.is_some_and(|subject| {
                    Readable::by_id(self.collection_viewer).admits(
                        subject.visibility,
                        subject.owner,
                        subject.is_archived,
                    )
                }),
            }
    }
}

/// One read of the feed of a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedQuery {
    pub game: String,
    /// Where the read starts; `None`: at the oldest retained event, wherever pruning left it
    /// when the store looks.
    pub after: Option<Cursor>,
    pub types: TypeFilter,
    pub limit: u32,
    pub reader: FeedReader,
}

/// An event a reader may read, with the read state now of the deck its `data` names
/// ([`crate::events::EventRecord::named_deck`]; `None`: it names none, or that deck is gone),
/// which decides whether the reader sees that id or `null`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadableEvent {
    pub event: Event,
    pub named: Option<SubjectAccess>,
}

impl ReadableEvent {
    /// The event as `reader` sees it: ids in `data` it may not read are `null`.
    pub fn seen_by(self, reader: FeedReader) -> Event {
        let mut event = self.event;
        if event.record.named_deck().is_some() && !reader.sees_named(self.named) {
            event.record.hide_named_deck();
        }
        event
    }
}

/// An event with the read state now of its subject and of the deck its `data` names: what a
/// wait needs to judge it for any reader without asking the store again.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedEvent {
    pub event: Event,
    pub subject: Option<SubjectAccess>,
    pub named: Option<SubjectAccess>,
}

impl JudgedEvent {
    /// The event as `query` lists it, when its types and its reader's read rule admit it.
    pub fn listed_to(&self, query: &FeedQuery) -> Option<ReadableEvent> {
        let record = &self.event.record;
        let listed = query.types.admits(record.event_type)
            && query.reader.admits(record.subject_kind(), self.subject);
        listed.then(|| ReadableEvent {
            event: self.event.clone(),
            named: self.named,
        })
    }
}

/// What a store found for a [`FeedQuery`], in one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedScan {
    /// The readable events among those looked at, ascending, at most `limit + 1`.
    pub readable: Vec<ReadableEvent>,
    /// How many events were looked at (at most [`FEED_SCAN_WINDOW`]), and the last of them.
    pub scanned: u32,
    pub scanned_through: Option<i64>,
    /// The highest sequence handed out so far, and the highest pruned.
    pub last_sequence: i64,
    pub pruned_through: i64,
}

/// A page of the feed.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedPage {
    pub events: Vec<Event>,
    pub has_more: bool,
    /// Where the next read starts: past every event this page looked at.
    pub next: Cursor,
}

impl FeedPage {
    /// No events, and the cursor where the reader stands.
    pub fn nothing_new(next: Cursor) -> Self {
        Self {
            events: Vec::new(),
            has_more: false,
            next,
        }
    }
}

impl FeedScan {
    /// The page this scan makes for `query`: the one rule both stores use for `has_more` and
    /// the next cursor. `None` when the cursor points before the retained events (pruned).
    pub fn page(mut self, query: &FeedQuery) -> Option<FeedPage> {
        let after = match query.after {
            Some(cursor) if cursor.sequence < self.pruned_through => return None,
            Some(cursor) => cursor.sequence,
            None => self.pruned_through,
        };
        let limit = query.limit as usize;
        let reader = query.reader;
        let seen = |readable: Vec<ReadableEvent>| -> Vec<Event> {
            readable
                .into_iter()
                .map(|readable| readable.seen_by(reader))
                .collect()
        };
        let page = if self.readable.len() > limit {
            self.readable.truncate(limit);
            let next = self
                .readable
                .last()
                .map_or(after, |readable| readable.event.sequence);
            FeedPage {
                events: seen(self.readable),
                has_more: true,
                next: Cursor { sequence: next },
            }
        } else if self.scanned >= FEED_SCAN_WINDOW {
            FeedPage {
                events: seen(self.readable),
                has_more: true,
                next: Cursor {
                    sequence: self.scanned_through.unwrap_or(after),
                },
            }
        } else {
            FeedPage {
                events: seen(self.readable),
                has_more: false,
                next: Cursor {
                    sequence: self.last_sequence.max(after),
                },
            }
        };
        Some(page)
    }
}
