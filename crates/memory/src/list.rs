//! What the deck and guide lists share in memory: the stable order, the result window and its
//! capped count. Which items a list holds and in what order is the domain's (`DeckQuery::admits`,
//! `DeckSort::compare`, `GuideQuery::admits`, `GuideSort::compare`).

use std::cmp::Ordering;

use deckhand_domain::decks::{Page, PageRequest, RESULT_WINDOW, SortOrder};

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
    found.sort_by(|a, b| order.apply(compare(a, b)));
    let counted = found.len().min(RESULT_WINDOW as usize + 1) as u64;
    let items = found
        .into_iter()
        .skip(asked.offset() as usize)
        .take(asked.limit as usize)
        .map(read)
        .collect::<anyhow::Result<_>>()?;
    Ok(Page::with_capped_total(items, counted))
}
