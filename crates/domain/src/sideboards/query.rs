//! Listing sideboard guides: filters and sorts. The page window, the order and the capped
//! count are the deck list's ([`PageRequest`], [`SortOrder`], [`Page`]).

use std::cmp::Ordering;

use time::OffsetDateTime;

use super::{Matchup, SideboardGuide};
use crate::decks::{DeckId, PageRequest, SortOrder, contains, within};
use crate::identity::UserId;
use crate::readable::Readable;
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

impl GuideQuery {
    /// The read rule of this list: what its viewer may find in a list.
    pub const fn readable(&self) -> Readable {
        Readable::listed(Some(self.viewer))
    }

    /// Whether `guide`, with the decks `attached` to it and its `matchups`, belongs in this
    /// list: of its game, readable in a list by its viewer, and through every filter. The
    /// memory store lists with it; PostgreSQL translates the same rules (`postgres::rules`).
    pub fn admits(
        &self,
        guide: &SideboardGuide,
        attached: &[DeckId],
        matchups: &[Matchup],
    ) -> bool {
        let GuideFilters {
            name_contains,
            opponent_archetype_contains,
            author,
            created_after,
            created_before,
            deck,
            edited_after,
            edited_before,
            format_contains,
            has_video,
        } = &self.filters;
        guide.game == self.game
            && guide.is_readable(self.readable())
            && author.is_none_or(|author| author == guide.author.id)
            && within(guide.created_at, *created_after, *created_before)
            && within(guide.updated_at, *edited_after, *edited_before)
            && deck.is_none_or(|deck| attached.contains(&deck))
            && (opponent_archetype_contains.is_none()
                || matchups.iter().any(|matchup| {
                    contains(
                        matchup.content.opponent_archetype.as_deref(),
                        opponent_archetype_contains.as_deref(),
                    )
                }))
            && contains(guide.content.format.as_deref(), format_contains.as_deref())
            && has_video.is_none_or(|wanted| wanted == guide.content.youtube_url.is_some())
            && contains(Some(&guide.content.name), name_contains.as_deref())
    }
}

impl GuideSort {
    /// The order of two guides in a list ascending by this sort; ties are broken by id.
    pub fn compare(self, a: &SideboardGuide, b: &SideboardGuide) -> Ordering {
        let key = match self {
            Self::CreatedAt => a.created_at.cmp(&b.created_at),
            Self::EditedAt => a.updated_at.cmp(&b.updated_at),
            Self::Likes => a.likes.cmp(&b.likes),
            Self::Views => a.pageviews.cmp(&b.pageviews),
        };
        key.then_with(|| a.id.cmp(&b.id))
    }
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
