//! Listing decks: filters, sort, and the page window.

use std::cmp::Ordering;

use time::OffsetDateTime;
use uuid::Uuid;

use super::{Deck, DeckId};
use crate::identity::UserId;
use crate::readable::Readable;
use crate::validation::{FieldViolation, Violations};

/// The deepest item a list may reach (`page * limit`); narrow the filters to go further.
pub const RESULT_WINDOW: u32 = 10_000;
pub const DEFAULT_PAGE_SIZE: u32 = 20;
pub const MAX_PAGE_SIZE: u32 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeckSort {
    CreatedAt,
    #[default]
    EditedAt,
    Likes,
    Trending,
    Views,
}

impl DeckSort {
    pub fn parse(value: &str) -> Result<Self, FieldViolation> {
        match value {
            "createdAt" => Ok(Self::CreatedAt),
            "editedAt" => Ok(Self::EditedAt),
            "likes" => Ok(Self::Likes),
            "trending" => Ok(Self::Trending),
            "views" => Ok(Self::Views),
            _ => Err(FieldViolation::new(
                "sort",
                "invalid",
                "must be one of createdAt, editedAt, likes, trending, views",
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    Asc,
    #[default]
    Desc,
}

impl SortOrder {
    pub fn parse(value: &str) -> Result<Self, FieldViolation> {
        match value {
            "asc" => Ok(Self::Asc),
            "desc" => Ok(Self::Desc),
            _ => Err(FieldViolation::new(
                "order",
                "invalid",
                "must be asc or desc",
            )),
        }
    }
}

/// A 1-based page of `limit` items inside the result window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    pub page: u32,
    pub limit: u32,
}

impl PageRequest {
    pub fn new(page: Option<u32>, limit: Option<u32>) -> Result<Self, Violations> {
        let page = page.unwrap_or(1);
        let limit = limit.unwrap_or(DEFAULT_PAGE_SIZE);
        let mut violations = Violations::default();
        if page < 1 {
            violations.push(FieldViolation::new("page", "range", "must be at least 1"));
        }
        if !(1..=MAX_PAGE_SIZE).contains(&limit) {
            violations.push(FieldViolation::new("limit", "range", "must be 1 to 100"));
        }
        if violations.0.is_empty() && u64::from(page) * u64::from(limit) > u64::from(RESULT_WINDOW)
        {
            violations.push(FieldViolation::new(
                "page",
                "window",
                "page * limit may not exceed 10000; narrow the filters (e.g. editedAfter) to go deeper",
            ));
        }
        violations.into_result(Self { page, limit })
    }

    pub fn offset(&self) -> u32 {
        (self.page - 1) * self.limit
    }
}

/// Every filter of the deck list, already validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeckFilters {
    pub author: Option<UserId>,
    pub created_after: Option<OffsetDateTime>,
    pub created_before: Option<OffsetDateTime>,
    pub edited_after: Option<OffsetDateTime>,
    pub edited_before: Option<OffsetDateTime>,
    pub format_id: Option<Uuid>,
    pub has_guide: Option<bool>,
    pub has_sideboard_guide: Option<bool>,
    pub has_video: Option<bool>,
    pub is_legal: Option<bool>,
    /// Case-insensitive substring of the name.
    pub name_contains: Option<String>,
    /// Forks of this deck only.
    pub forked_from: Option<DeckId>,
    /// Decks holding every one of these cards in a counted section, any printing
    /// (`card_search`).
    pub cards: Vec<Uuid>,
    /// Decks holding none of these cards in a counted section.
    pub exclude_cards: Vec<Uuid>,
}

/// One list request as the store runs it: archived decks are always left out; `viewer`'s own
/// unlisted and private decks are included besides every public one.
#[derive(Debug, Clone, PartialEq)]
pub struct DeckQuery {
    pub game: String,
    pub viewer: Option<UserId>,
    pub filters: DeckFilters,
    pub sort: DeckSort,
    pub order: SortOrder,
    pub page: PageRequest,
    /// Whether the page shows its decks' summaries (`include=summary`). Without it a store
    /// may leave each listing's summary empty (`DeckSummary::default()`) rather than read it:
    /// no answer shows it then.
    pub with_summary: bool,
}

impl DeckQuery {
    /// The read rule of this list: what its viewer may find in a list.
    pub const fn readable(&self) -> Readable {
        Readable::listed(self.viewer)
    }

    /// Whether `deck` belongs in this list: of its game, readable in a list by its viewer, and
    /// through every filter but the card filters, which a store applies with
    /// [`DeckFilters::admits_cards`] over the deck's `card_search::counted_copies`. The memory
    /// store lists with it; PostgreSQL translates the same rules into SQL (`postgres::rules`).
    pub fn admits(&self, deck: &Deck) -> bool {
        let DeckFilters {
            author,
            created_after,
            created_before,
            edited_after,
            edited_before,
            format_id,
            has_guide,
            has_sideboard_guide,
            has_video,
            is_legal,
            name_contains,
            forked_from,
            // The card filters need the game's sections: `admits_cards`.
            cards: _,
            exclude_cards: _,
        } = &self.filters;
        let flag =
            |wanted: &Option<bool>, actual: bool| wanted.is_none_or(|wanted| wanted == actual);
        deck.facts.game == self.game
            && deck.is_readable(self.readable())
            && author.is_none_or(|author| author == deck.facts.author.id)
            && within(deck.facts.created_at, *created_after, *created_before)
            && within(deck.facts.updated_at, *edited_after, *edited_before)
            && format_id.is_none_or(|format| deck.content.format_id == Some(format))
            && flag(has_guide, deck.facts.has_guide)
            && flag(has_sideboard_guide, deck.facts.has_sideboard_guide)
            && flag(has_video, deck.content.youtube_url.is_some())
            && flag(is_legal, deck.content.legal)
            && contains(Some(&deck.content.name), name_contains.as_deref())
            && forked_from.is_none_or(|source| {
                deck.facts
                    .fork
                    .is_some_and(|fork| fork.source.deck_id == source)
            })
    }
}

impl DeckSort {
    /// The order of two decks in a list ascending by this sort, each with its trending score
    /// (see [`trending`](super::trending)); ties are broken by id, so the order is total.
    pub fn compare(self, (a, a_trending): (&Deck, f64), (b, b_trending): (&Deck, f64)) -> Ordering {
        let key = match self {
            Self::CreatedAt => a.facts.created_at.cmp(&b.facts.created_at),
            Self::EditedAt => a.facts.updated_at.cmp(&b.facts.updated_at),
            Self::Views => a.facts.pageviews.cmp(&b.facts.pageviews),
            Self::Likes => a.facts.likes.cmp(&b.facts.likes),
            Self::Trending => a_trending.total_cmp(&b_trending),
        };
        key.then_with(|| a.facts.id.cmp(&b.facts.id))
    }
}

impl SortOrder {
    /// `ascending` (an order ascending by the sort), turned this way.
    pub fn apply(self, ascending: Ordering) -> Ordering {
        match self {
            Self::Asc => ascending,
            Self::Desc => ascending.reverse(),
        }
    }
}

/// Whether `value` lies within a filter's inclusive bounds (either may be absent).
pub fn within(
    value: OffsetDateTime,
    after: Option<OffsetDateTime>,
    before: Option<OffsetDateTime>,
) -> bool {
    after.is_none_or(|after| value >= after) && before.is_none_or(|before| value <= before)
}

/// Whether `haystack` contains `needle`, ignoring case (a filter's substring match, its LIKE
/// wildcards taken literally in SQL); no needle matches everything, no haystack nothing.
pub fn contains(haystack: Option<&str>, needle: Option<&str>) -> bool {
    needle.is_none_or(|needle| {
        haystack.is_some_and(|haystack| haystack.to_lowercase().contains(&needle.to_lowercase()))
    })
}

/// A page of results with the count of all matches, capped at the result window.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: u64,
    /// False when the count reached the cap and stopped there.
    pub total_exact: bool,
}

impl<T> Page<T> {
    /// Builds the page from a count that was taken with `LIMIT RESULT_WINDOW + 1`.
    pub fn with_capped_total(items: Vec<T>, counted: u64) -> Self {
        let cap = u64::from(RESULT_WINDOW);
        Self {
            items,
            total: counted.min(cap),
            total_exact: counted <= cap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_default_and_stay_inside_the_window() {
        assert_eq!(
            PageRequest::new(None, None).unwrap(),
            PageRequest { page: 1, limit: 20 }
        );
        assert_eq!(
            PageRequest::new(Some(100), Some(100)).unwrap().offset(),
            9_900
        );
        assert!(PageRequest::new(Some(101), Some(100)).is_err());
        assert!(PageRequest::new(Some(0), None).is_err());
        assert!(PageRequest::new(None, Some(0)).is_err());
        assert!(PageRequest::new(None, Some(101)).is_err());
    }

    #[test]
    fn totals_past_the_window_are_capped_and_flagged() {
        let page = Page::<()>::with_capped_total(vec![], 10_001);
        assert_eq!((page.total, page.total_exact), (10_000, false));
        let page = Page::<()>::with_capped_total(vec![], 10_000);
        assert_eq!((page.total, page.total_exact), (10_000, true));
    }

    #[test]
    fn sort_and_order_take_only_their_names() {
        assert_eq!(DeckSort::parse("trending").unwrap(), DeckSort::Trending);
        assert!(DeckSort::parse("Trending").is_err());
        assert_eq!(SortOrder::parse("asc").unwrap(), SortOrder::Asc);
        assert!(SortOrder::parse("up").is_err());
    }
}
