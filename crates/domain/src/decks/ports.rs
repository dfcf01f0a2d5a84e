//! Deck ports. See the crate's error contract in [`crate::ports`].

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};

use super::card_search::{CardStatsQuery, CardUsage};
use super::guide::DeckGuide;
use super::model::{
    Author, Deck, DeckContent, DeckFacts, DeckId, DeckListing, DeckOverview, DeckReader,
    DeckSummary, DeckVersion, ForkOrigin, ForkedFrom, HistoryType, Provenance, SourceAccess,
};
use super::query::{DeckQuery, Page};
use crate::events::{EventRecord, Origin};
use crate::identity::{UserId, Username};

/// A deck to store, with its first history record (`create`).
#[derive(Debug, Clone, PartialEq)]
pub struct NewDeck {
    pub id: DeckId,
    pub game: String,
    pub owner: UserId,
    pub content: DeckContent,
    pub summary: DeckSummary,
    pub provenance: Provenance,
    /// The deck and version this one is a fork of; `None` for a deck created from scratch.
    /// What a `deck.created` event names as `forked_from`.
    pub forked_from: Option<ForkedFrom>,
    pub created_at: OffsetDateTime,
    /// Its `deck.created` event, stored with it.
    pub event: EventRecord,
}

impl NewDeck {
    /// The deck as `insert` returns it: version 1, no views, likes, forks or guides, not
    /// archived, edited when created; `username` is the owner's, `source` what the read rule
    /// knows of the deck it forks (see [`ForkOrigin`]).
    pub fn as_inserted(&self, username: Username, source: Option<SourceAccess>) -> Deck {
        Deck {
            facts: DeckFacts {
                id: self.id,
                game: self.game.clone(),
                author: Author {
                    id: self.owner,
                    username,
                },
                summary: self.summary.clone(),
                pageviews: 0,
                likes: 0,
                has_guide: false,
                has_sideboard_guide: false,
                fork: self.forked_from.map(|forked_from| ForkOrigin {
                    source: forked_from,
                    access: source,
                }),
                forks: 0,
                created_at: self.created_at,
                updated_at: self.created_at,
            },
            content: self.content.clone(),
            provenance: self.provenance.clone(),
            is_archived: false,
            version: 1,
        }
    }

    /// History record 1, which `insert` stores with the deck.
    pub fn first_version(&self) -> DeckVersion {
        DeckVersion {
            version_number: 1,
            history_type: HistoryType::Create,
            content: self.content.clone(),
            summary: self.summary.clone(),
            edited_at: self.created_at,
        }
    }
}

/// The state a save writes, decided by a [`Reviser`] from the locked current deck.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    pub content: DeckContent,
    pub summary: DeckSummary,
    pub provenance: Provenance,
    pub is_archived: bool,
    pub history_type: HistoryType,
    pub at: OffsetDateTime,
    /// Who saves, and the id of the event the save writes (`events::rules::deck_saved`).
    pub origin: Origin,
}

impl Revision {
    /// `current` as a store saves this revision of it: its content, summary, provenance and
    /// archive state replaced, its version the next and its edit time the revision's.
    pub fn applied_to(self, current: Deck) -> Deck {
        Deck {
            facts: DeckFacts {
                summary: self.summary,
                updated_at: self.at,
                ..current.facts
            },
            content: self.content,
            provenance: self.provenance,
            is_archived: self.is_archived,
            version: current.version + 1,
        }
    }
}

/// Why a reviser declined to save.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RevisionRefused {
    /// The caller may not write this deck (answered as "not found": hidden is not forbidden).
    #[error("no such deck")]
    NotFound,
    /// `If-Match` named another version.
    #[error("the deck is at version {current_version}")]
    PreconditionFailed { current_version: i32 },
}

/// Decides a deck's next state from its current one. A store may run it more than once, on
/// the deck as it is after another save came between (see `DeckRepository::revise`), so it
/// must be pure: everything it needs is fetched before.
pub type Reviser = Box<dyn Fn(&Deck) -> Result<Revision, RevisionRefused> + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum InsertDeckError {
    /// The owner already has a deck with this provider, external id and external version.
    #[error("duplicate provenance")]
    DuplicateProvenance,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum ReviseDeckError {
    #[error("no such deck")]
    NotFound,
    #[error(transparent)]
    Refused(RevisionRefused),
    #[error("duplicate provenance")]
    DuplicateProvenance,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The outcome of registering a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewCount {
    pub pageviews: i64,
    pub incremented: bool,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait DeckRepository: Send + Sync {
    /// Stores the deck, zeroed counters, history record 1 and its event, atomically. A fork
    /// (`forked_from` set) moves its source's `forks` counter by one in the same transaction,
    /// so parallel forks of one deck all count; the source exists (the service read it).
    /// `DuplicateProvenance` when the owner has the same provenance triple already.
    async fn insert(&self, deck: &NewDeck) -> Result<Deck, InsertDeckError>;

    /// The deck, whatever its visibility or archive state; the service judges access. Decks,
    /// overviews and listings of forks carry their source's [`SourceAccess`] as it is now.
    async fn find(&self, id: DeckId) -> anyhow::Result<Option<Deck>>;

    /// The deck without its card lines ([`Deck::overview`]), whatever its visibility or archive
    /// state; the service judges access.
    async fn find_overview(&self, id: DeckId) -> anyhow::Result<Option<DeckOverview>>;

    /// Asks `reviser` for the deck's next state and stores it as version + 1 with one history
    /// record and its event (`events::rules::deck_saved` of the deck and the revision),
    /// atomically: concurrent saves serialise and none is lost. A store that finds
    /// another save came between its read and its write asks `reviser` again, on the newer
    /// deck.
    /// `NotFound` when there is no such deck; `Refused` passes the reviser's refusal on.
    async fn revise(&self, id: DeckId, reviser: Reviser) -> Result<Deck, ReviseDeckError>;

    /// The history, oldest first (position 1 is the create record).
    async fn versions(&self, id: DeckId) -> anyhow::Result<Vec<DeckVersion>>;

    /// One history record.
    async fn version(&self, id: DeckId, number: i32) -> anyhow::Result<Option<DeckVersion>>;

    /// One page of decks; the total counts at most `RESULT_WINDOW + 1` matches. A total may be
    /// a few seconds old when another instance changed decks meanwhile (each store says how
    /// old); the store's own writes show at once.
    async fn list(&self, query: &DeckQuery) -> anyhow::Result<Page<DeckListing>>;

    /// The usage of a card among the public, non-archived decks of its game (of one format
    /// when the query names one), as [`CardUsage`] describes it. It may be up to
    /// `card_search::STATS_MAX_AGE` old (its `as_of` says when it was gathered); every instance
    /// on one store answers the same figures.
    async fn card_usage(&self, query: &CardStatsQuery) -> anyhow::Result<CardUsage>;

    /// Counts a view by `visitor` (a keyed hash) unless that visitor has a counted view of the
    /// deck within `window`, and adds `trending_weight` to the decayed trending score in the
    /// same statement. Atomic: parallel first views by one visitor count once. `None`, counting
    /// nothing, when there is no such deck or `reader` may not see it.
    #[allow(clippy::too_many_arguments)]
    async fn count_view(
        &self,
        id: DeckId,
        reader: &DeckReader,
        visitor: &[u8; 32],
        now: OffsetDateTime,
        window: Duration,
        trending_weight: f64,
    ) -> anyhow::Result<Option<ViewCount>>;

    /// Records `user`'s like of the deck (`liked`) or withdraws it, moving the deck's `likes`
    /// counter in the same statement: idempotent per user, and concurrent calls lose nothing.
    /// False, changing nothing, when there is no such deck or `reader` may not see it.
    async fn set_like(
        &self,
        id: DeckId,
        reader: &DeckReader,
        user: UserId,
        liked: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// The deck's strategy guide, if it has one.
    async fn guide(&self, deck: DeckId) -> anyhow::Result<Option<DeckGuide>>;

    /// Stores `guide` as the deck's guide, sets its `has_guide` and writes `event`, in one
    /// transaction. A replaced guide keeps its id and `created_at`. Returns the stored guide
    /// and whether it is new.
    async fn put_guide(
        &self,
        guide: &DeckGuide,
        event: &EventRecord,
    ) -> anyhow::Result<(DeckGuide, bool)>;

    /// Deletes the deck's guide, clears `has_guide` and writes `event`, in one transaction;
    /// false (and no event) when there was none.
    async fn delete_guide(&self, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool>;
}
