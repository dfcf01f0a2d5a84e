//! Sideboard guides: a plan per opponent for a deck (public spec 2.5 to 2.7 and 4.5), their
//! matchups, deck membership, visibility and ownership rules, and the listing.

mod changes;
pub mod events;
mod model;
pub mod ports;
mod query;
mod service;

pub use changes::{
    GuideChanges, MAX_CARD_ID, MAX_DESCRIPTION, MAX_FORMAT, MAX_MATCHUP_NOTES,
    MAX_MATCHUPS_PER_REQUEST, MAX_NAME, MAX_NOTES, MAX_OPPONENT_ARCHETYPE, MAX_OPPONENT_DECK_NAME,
    MAX_OVERRIDES, MAX_SORT_ORDER, MAX_TAG, MAX_TAGS, MAX_THUMBNAIL, MAX_YOUTUBE_URL,
    MatchupChanges, NewGuideInput, OverrideInput,
};
pub use model::{
    AttachedDeck, CardOverride, Difficulty, GuideContent, GuideDetail, GuideId, Matchup,
    MatchupContent, MatchupId, OverrideType, PrimaryDeckSummary, SideboardGuide,
};
pub use query::{GuideFilters, GuideListRequest, GuideQuery, GuideSort};
pub use service::{GuideError, SideboardGuideService};
