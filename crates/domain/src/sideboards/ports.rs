//! The sideboard guide port. See the crate's error contract in [`crate::ports`].
//!
//! **`Deck::has_sideboard_guide`** is true exactly while a non-archived guide has the deck
//! attached. The stores keep it as a stored flag (the deck list filters on it without a join),
//! so every method below that changes which non-archived guides a deck is attached to (insert,
//! attach, detach, and a revise that archives or unarchives) sets the flag of the decks it
//! touched in the same transaction, from the attachments as they are after the write.
//!
//! **Events.** Every method that changes a guide writes its event in the same transaction:
//! the one it is handed (whose `occurred_at` is the time the guide is marked edited), or for
//! `revise` the one `events::rules::guide_saved` makes of the guide and its revision. A method
//! that changes nothing (returns false or an error) writes none.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::model::{
    GuideContent, GuideDetail, GuideId, Matchup, MatchupContent, MatchupId, SideboardGuide,
};
use super::query::GuideQuery;
use crate::decks::{DeckId, Page};
use crate::events::{EventRecord, Origin};
use crate::identity::UserId;

/// A guide to store, with its primary deck and its first matchups.
#[derive(Debug, Clone, PartialEq)]
pub struct NewGuide {
    pub id: GuideId,
    pub game: String,
    pub owner: UserId,
    pub content: GuideContent,
    pub primary_deck: DeckId,
    pub matchups: Vec<NewMatchup>,
    pub created_at: OffsetDateTime,
    /// Its `sideboard_guide.created` event, stored with it.
    pub event: EventRecord,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewMatchup {
    pub id: MatchupId,
    pub content: MatchupContent,
}

/// The state a guide PATCH writes, decided by a [`GuideReviser`] from the locked guide.
#[derive(Debug, Clone, PartialEq)]
pub struct GuideRevision {
    pub content: GuideContent,
    pub is_archived: bool,
    pub at: OffsetDateTime,
    /// Who saves, and the id of the event the save writes (`events::rules::guide_saved`).
    pub origin: Origin,
}

/// Decides a guide's next state from its current one while the store holds it locked, so
/// concurrent PATCHes of different fields lose nothing. Must be pure.
pub type GuideReviser = Box<dyn FnOnce(&SideboardGuide) -> GuideRevision + Send>;

/// Decides a matchup's next content from its current one, under the same lock discipline.
pub type MatchupReviser = Box<dyn FnOnce(&MatchupContent) -> MatchupContent + Send>;

#[derive(Debug, thiserror::Error)]
pub enum ReviseGuideError {
    #[error("no such guide")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[derive(Debug, thiserror::Error)]
pub enum ReviseMatchupError {
    /// No matchup with this id on this guide.
    #[error("no such matchup")]
    NotFound,
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SideboardGuideRepository: Send + Sync {
    /// Stores the guide (zeroed counters, not archived), its primary deck as the first
    /// attachment, and its matchups, and sets the primary deck's `has_sideboard_guide`, in one
    /// transaction. Returns the stored detail, summary loaded. The owner and the primary deck
    /// exist (the service checked); anything else failing is `Unexpected`.
    async fn insert(&self, guide: &NewGuide) -> anyhow::Result<GuideDetail>;

    /// The guide alone (no summary, decks or matchups), whatever its visibility or archive
    /// state: what access checks need. `None` when there is no such guide.
    async fn find(&self, id: GuideId) -> anyhow::Result<Option<SideboardGuide>>;

    /// The detail: the guide with its primary deck's summary, every attached deck (primary
    /// first, then in attach order) and its matchups (by `sort_order`, then creation, then id).
    async fn detail(&self, id: GuideId) -> anyhow::Result<Option<GuideDetail>>;

    /// Locks the guide, asks `reviser` for the next state and stores it, in one transaction;
    /// when the archive flag changes, the attached decks' `has_sideboard_guide` follow in the
    /// same transaction. `NotFound` when there is no such guide. Returns the detail.
    async fn revise(
        &self,
        id: GuideId,
        reviser: GuideReviser,
    ) -> Result<GuideDetail, ReviseGuideError>;

    /// One page of guides; the total counts at most `RESULT_WINDOW + 1` matches. The primary
    /// deck's summary is loaded only when `query.with_summary`. A fixed number of statements
    /// whatever the page size.
    async fn list(&self, query: &GuideQuery) -> anyhow::Result<Page<SideboardGuide>>;

    /// Attaches `deck` to the guide (after the ones attached before), marks the guide edited
    /// and sets the deck's `has_sideboard_guide` when the guide is not archived, in
    /// one transaction. False (and nothing changes) when the deck was attached already. The
    /// guide and the deck exist (the service checked).
    async fn attach(&self, id: GuideId, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool>;

    /// Detaches `deck` unless it is the primary deck, marks the guide edited and recomputes
    /// the deck's `has_sideboard_guide`, in one transaction. False (and nothing changes) when
    /// the deck is not attached, or is the primary deck.
    async fn detach(&self, id: GuideId, deck: DeckId, event: &EventRecord) -> anyhow::Result<bool>;

    /// Records `user`'s like of the guide (`liked`) or withdraws it, moving the guide's `likes`
    /// counter in the same statement (never its `editedAt`): idempotent per user, and
    /// concurrent calls lose nothing. False, changing nothing, when there is no such guide in
    /// `game` or `user` may not see it.
    async fn set_like(
        &self,
        id: GuideId,
        game: &str,
        user: UserId,
        liked: bool,
        at: OffsetDateTime,
    ) -> anyhow::Result<bool>;

    /// Adds a matchup created at the event's time to an existing guide and marks the guide
    /// edited.
    async fn add_matchup(
        &self,
        id: GuideId,
        matchup: &NewMatchup,
        event: &EventRecord,
    ) -> anyhow::Result<Matchup>;

    /// Locks the guide's matchup, stores what `reviser` makes of it and marks the guide
    /// edited, in one transaction. `NotFound` when the guide has no such matchup.
    async fn revise_matchup(
        &self,
        id: GuideId,
        matchup: MatchupId,
        reviser: MatchupReviser,
        event: &EventRecord,
    ) -> Result<Matchup, ReviseMatchupError>;

    /// Deletes the guide's matchup and marks the guide edited; false when it has none such.
    async fn delete_matchup(
        &self,
        id: GuideId,
        matchup: MatchupId,
        event: &EventRecord,
    ) -> anyhow::Result<bool>;
}
