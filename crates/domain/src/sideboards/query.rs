//! Listing sideboard guides: filters and sorts. The page window, the order and the capped
//! count are the deck list's ([`PageRequest`], [`SortOrder`], [`Page`]).

use time::OffsetDateTime;

use crate::decks::{DeckId, PageRequest, SortOrder};
use crate::identity::UserId;
use crate::validation::FieldViolation;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuideSort {
    CreatedAt,
    #[default]
    EditedAt,
    Likes,
    Views,
}

impl GuideSort {
    pub fn parse(value: &str) -> Result<Self, FieldViolation> {
        match value {
            "createdAt" => Ok(Self::CreatedAt),
            "editedAt" => Ok(Self::EditedAt),
            "likes" => Ok(Self::Likes),
            "views" => Ok(Self::Views),
            _ => Err(FieldViolation::new(
                "sort",
                "invalid",
                "must be one of createdAt, editedAt, likes, views",
            )),
        }
    }
}

/// Every filter of the guide list (public spec 4.5 under the contract's names), validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuideFilters {
    /// `q`: case-insensitive substring of the name.
    pub name_contains: Option<String>,
    /// `opponentArchetype`: case-insensitive substring of a matchup's opponent archetype.
    pub opponent_archetype_contains: Option<String>,
    pub author: Option<UserId>,
    pub created_after: Option<OffsetDateTime>,
    pub created_before: Option<OffsetDateTime>,
    /// `deckId`: guides that have this deck attached (the primary deck included).
    pub deck: Option<DeckId>,
    pub edited_after: Option<OffsetDateTime>,
    pub edited_before: Option<OffsetDateTime>,
    /// `format`: case-insensitive substring of the plain format string.
    pub format_contains: Option<String>,
    pub has_video: Option<bool>,
}

/// The parameters of a list request, validated at the edge.
#[derive(Debug, Clone, PartialEq)]
pub struct GuideListRequest {
    pub filters: GuideFilters,
    pub sort: GuideSort,
    pub order: SortOrder,
    pub page: PageRequest,
    /// `include=summary`: load the primary deck's featured cards and colours.
    pub with_summary: bool,
}

/// One list request as the store runs it: archived guides are always left out; `viewer`'s own
/// unlisted and private guides are included besides every public one.
#[derive(Debug, Clone, PartialEq)]
pub struct GuideQuery {
    pub game: String,
    pub viewer: UserId,
    pub filters: GuideFilters,
    pub sort: GuideSort,
    pub order: SortOrder,
    pub page: PageRequest,
    pub with_summary: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_take_only_their_names() {
        assert_eq!(GuideSort::parse("views").unwrap(), GuideSort::Views);
        assert_eq!(GuideSort::default(), GuideSort::EditedAt);
        assert!(GuideSort::parse("trending").is_err(), "decks only");
        assert!(GuideSort::parse("Likes").is_err());
    }
}
