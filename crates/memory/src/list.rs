//! What the deck and guide lists share in memory, as `postgres::decks::list_query` shares it
//! in SQL: inclusive time bounds, case-insensitive substrings, the stable order, the result
//! window and its capped count.

use std::cmp::Ordering;

use deckhand_domain::decks::{Page, PageRequest, RESULT_WINDOW, SortOrder};
use time::OffsetDateTime;

/// Whether `value` lies within a filter's inclusive bounds (either may be absent).
pub(crate) fn within(
    value: OffsetDateTime,
    after: Option<OffsetDateTime>,
    before: Option<OffsetDateTime>,
) -> bool {
    after.is_none_or(|after| value >= after) && before.is_none_or(|before| value <= before)
}

/// Whether `haystack` contains `needle`, ignoring case; no needle matches everything, no
/// haystack nothing.
pub(crate) fn contains(haystack: Option<&str>, needle: Option<&str>) -> bool {
    needle.is_none_or(|needle| {
        haystack.is_some_and(|haystack| haystack.to_lowercase().contains(&needle.to_lowercase()))
    })
}

/// The asked page of `found` sorted by `compare` in `order` (`compare` ends on the id, so the
/// order is stable), each item read by `read`, and the total counted as far as PostgreSQL
/// counts it: one past the result window.
pub(crate) fn page<T, U>(
    mut found: Vec<&T>,
    order: SortOrder,
    asked: PageRequest,
    compare: impl Fn(&T, &T) -> Ordering,
    read: impl FnMut(&T) -> anyhow::Result<U>,
) -> anyhow::Result<Page<U>> {
    found.sort_by(|a, b| match order {
        SortOrder::Asc => compare(a, b),
        SortOrder::Desc => compare(b, a),
    });
    let counted = found.len().min(RESULT_WINDOW as usize + 1) as u64;
    let items = found
        .into_iter()
        .skip(asked.offset() as usize)
        .take(asked.limit as usize)
        .map(read)
        .collect::<anyhow::Result<_>>()?;
    Ok(Page::with_capped_total(items, counted))
}
