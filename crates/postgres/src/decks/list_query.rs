//! The shapes of a deck list's statements: the count, and the page query in each of its forms,
//! over the WHERE clause and the order that `crate::rules` translates from the domain's
//! `DeckQuery` (shared by the count and the page). Plans of every shape are in
//! docs/benchmarks.md.

use deckhand_domain::decks::{DeckQuery, DeckSort, PageRequest};

use crate::list_counts::Listed;
use crate::rules::{Conditions, deck_order, direction};
use crate::statement::Bind;

/// The `LIMIT` and `OFFSET` of `page`. The limit (1 to 100, validated by the domain) is written
/// into the SQL and the first page has no `OFFSET`, so PostgreSQL keeps one generic plan of the
/// prepared page query: with either as a parameter its generic plan looks costlier than a
/// custom one, and the query was planned anew on every run (docs/benchmarks.md). Deeper pages
/// bind their offset, so the statements a connection prepares stay few. A name filter keeps
/// both as parameters: a generic plan cannot see how rare the pattern is, and measured at
/// half the throughput of planning each run.
pub(crate) fn page_window(conditions: &mut Conditions, page: PageRequest) -> String {
    if conditions.plan_each_run() {
        let limit = conditions.param(Bind::Int(i64::from(page.limit)));
        let offset = conditions.param(Bind::Int(i64::from(page.offset())));
        return format!("LIMIT {limit} OFFSET {offset}");
    }
    match page.offset() {
        0 => format!("LIMIT {}", page.limit),
        offset => {
            let offset = conditions.param(Bind::Int(i64::from(offset)));
            format!("LIMIT {} OFFSET {offset}", page.limit)
        }
    }
}

/// The count of matches (a [`Listed::count_sql`]). No join: every deck has exactly one stats
/// row, so counting decks is enough, and the date indexes (which include visibility and owner)
/// answer it by index-only scan.
pub(super) fn count_sql(where_clause: &str, game: &str) -> String {
    Listed::Decks.count_sql("decks d", where_clause, game)
}

/// Whether `sort` is by a counter, which `deck_stats` holds.
fn by_counter(sort: DeckSort) -> bool {
    matches!(sort, DeckSort::Views | DeckSort::Likes | DeckSort::Trending)
}

/// What every form of a page query is built from: the list's query, its game (an SQL literal or
/// placeholder), its WHERE clause and its [`page_window`].
pub(super) struct PageParts<'a> {
    pub(super) query: &'a DeckQuery,
    pub(super) game: &'a str,
    pub(super) where_clause: &'a str,
    pub(super) window: &'a str,
}

impl PageParts<'_> {
    fn order(&self) -> String {
        deck_order(self.query.sort, self.query.order)
    }

    /// The query of a page's ids, in the page's order: it reads the narrow index entries only,
    /// so the rows an OFFSET skips are never joined to users and deck_stats nor sorted whole (a
    /// deep page went from ~100 ms to ~3 ms on 200,000 decks, docs/benchmarks.md). deck_stats
    /// drives the counter sorts through its (game, counter) indexes; a deck's stats row always
    /// copies its game, so this repeats `d.game`.
    pub(super) fn ids_sql(&self) -> String {
        let Self {
            game,
            where_clause,
            window,
            ..
        } = self;
        let from = if by_counter(self.query.sort) {
            format!("deck_stats s JOIN decks d ON d.id = s.deck_id AND s.game = {game}")
        } else {
            "decks d".to_owned()
        };
        let order = self.order();
        format!("SELECT d.id FROM {from} WHERE {where_clause} ORDER BY {order} {window}")
    }

    /// The page query: [`Self::ids_sql`] as its inner query, and `select` (the list columns,
    /// never the card lines) of those ids, sorted again (the order is total: ties broken by id).
    pub(super) fn sql(&self, select: &str) -> String {
        let ids = self.ids_sql();
        let order = self.order();
        format!("WITH page AS ({ids}) {select} JOIN page ON page.id = d.id ORDER BY {order}")
    }

    /// A first page as one plain query, for conditions without parameters: PostgreSQL plans it
    /// once per connection with its very values, and reads each row once as the index gives it
    /// (editedAt 108 buffers and 0.08 ms against [`Self::sql`]'s 224 and 0.25 ms; views 183 and
    /// 0.12 ms against 320 and 0.23 ms; docs/benchmarks.md). With a parameter PostgreSQL plans
    /// this form on every run, so [`Self::sql`] serves those.
    pub(super) fn first_sql(&self, select: &str) -> String {
        let Self {
            game,
            where_clause,
            window,
            ..
        } = self;
        let stats_game = if by_counter(self.query.sort) {
            format!(" AND s.game = {game}")
        } else {
            String::new()
        };
        let order = self.order();
        format!("{select} WHERE {where_clause}{stats_game} ORDER BY {order} {window}")
    }
}

/// How many decks of a date-sorted list a page filtered by name or card walks, in the list's
/// order, looking for its matches before it hands over to other statements.
pub(super) const WALK: u32 = 2_000;

/// The most decks a gathered page ([`gathered_page_sql`]) reads: a page whose cards more decks
/// hold than that is answered by the statements planned for its values.
pub(super) const GATHERED_AT_MOST: u32 = 2_000;

/// The date column a sort orders by, for the sorts whose index also holds each deck's name and
/// card sieve.
fn walked_date(sort: DeckSort) -> Option<&'static str> {
    match sort {
        DeckSort::CreatedAt => Some("created_at"),
        DeckSort::EditedAt => Some("updated_at"),
        DeckSort::Views | DeckSort::Likes | DeckSort::Trending => None,
    }
}

/// A page filtered by name or card, of a date sort, as one statement on a generic plan: it walks
/// the first [`WALK`] decks of the list (`where_clause`, without those filters) in order and
/// keeps those that pass `row_filter` (the clauses of `Conditions::row_filters`, whose values
/// are read through scalar subqueries, so no plan sees them: every plan of this statement is the
/// same walk, and PostgreSQL keeps a generic one instead of planning each run, 0.12 ms, more
/// than the walk takes). The date index holds the names and each deck's card sieve
/// (`Conditions::card_sieve`), so a walk for a name alone reads the index only, and one for
/// cards (`card_sieve`) reads the rows of the decks the sieve lets through, checks their cards
/// there and takes the page's columns from the same rows; an exclusion alone reads each walked
/// deck's `card_ids`. A page the walk fills is the page; one it leaves short may have matches
/// further down the list, which a statement gathered or planned for its values finds. `None`
/// for the counter sorts, whose indexes hold neither, and for a page that ends past the walked
/// head, which no walk could fill.
pub(super) fn walked_page_sql(
    query: &DeckQuery,
    walk: &WalkParts,
    select: &str,
    window: &str,
) -> Option<String> {
    let date = walked_date(query.sort)?;
    if query.page.offset() + query.page.limit > WALK {
        return None;
    }
    let WalkParts {
        where_clause,
        row_filter,
        card_sieve,
    } = walk;
    let order = deck_order(query.sort, query.order);
    if let Some(sieve) = card_sieve {
        let direction = direction(query.order);
        return Some(format!(
            "{select} JOIN (SELECT d.id, d.{date}, d.card_bloom FROM decks d \
             WHERE {where_clause} ORDER BY {order} LIMIT {WALK}) AS w ON w.id = d.id \
             WHERE {sieve} AND {row_filter} \
             ORDER BY w.{date} {direction}, w.id {direction} {window}"
        ));
    }
    let filters = &query.filters;
    let cards = if filters.cards.is_empty() && filters.exclude_cards.is_empty() {
        ""
    } else {
        ", d.card_ids"
    };
    Some(format!(
        "WITH page AS (SELECT d.id FROM (SELECT d.id, d.name, d.{date}{cards} FROM decks d \
         WHERE {where_clause} ORDER BY {order} LIMIT {WALK}) AS d \
         WHERE {row_filter} ORDER BY {order} {window}) \
         {select} JOIN page ON page.id = d.id ORDER BY {order}"
    ))
}

/// What a walked page ([`walked_page_sql`]) filters by: the list's conditions but the name and
/// cards (`where_clause`), those (`row_filter`, over a deck's row `d`), and the card sieve over
/// the walked deck `w` when cards are wanted.
pub(super) struct WalkParts {
    pub(super) where_clause: String,
    pub(super) row_filter: String,
    pub(super) card_sieve: Option<String>,
}

/// A page of a date sort filtered by cards that a walk found rare, as one statement on a
/// generic plan: the decks holding them (`where_clause`, the card filters' values read through
/// scalar subqueries) are gathered from the GIN index `decks_card_ids`, at most one past
/// [`GATHERED_AT_MOST`], and the page sorted out of them. When more decks than that hold the
/// cards (a common card missing from the head of the list) the page comes back empty, for the
/// caller to ask the statements planned for its values: a gathering never reads more than
/// [`GATHERED_AT_MOST`] decks. `None` for the counter sorts.
pub(super) fn gathered_page_sql(
    query: &DeckQuery,
    select: &str,
    where_clause: &str,
    window: &str,
) -> Option<String> {
    let date = walked_date(query.sort)?;
    let order = deck_order(query.sort, query.order);
    let over = GATHERED_AT_MOST + 1;
    Some(format!(
        "WITH matching AS MATERIALIZED (SELECT d.id, d.{date} FROM decks d WHERE {where_clause} \
         LIMIT {over}), \
         page AS (SELECT d.id FROM matching d \
         WHERE (SELECT count(*) FROM matching) <= {GATHERED_AT_MOST} ORDER BY {order} {window}) \
         {select} JOIN page ON page.id = d.id ORDER BY {order}"
    ))
}

/// `select` of the decks whose ids are `$1`, in the page's order: the second half of
/// [`PageParts::sql`] on its own, for pages whose ids are picked by a statement of their own. The ids
/// are read through a scalar subquery, so no plan sees how many there are: a page of one or two
/// ids planned cheaper than the generic plan, and PostgreSQL then planned it on every run.
pub(super) fn rows_by_ids_sql(query: &DeckQuery, select: &str) -> String {
    let order = deck_order(query.sort, query.order);
    format!("{select} WHERE d.id = ANY((SELECT $1::uuid[])::uuid[]) ORDER BY {order}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_date_sorted_pages_within_the_walked_head_are_walked() {
        let walked = |sort, page, limit| {
            let query = DeckQuery {
                with_summary: false,
                game: "mtg".into(),
                viewer: None,
                filters: deckhand_domain::decks::DeckFilters::default(),
                sort,
                order: deckhand_domain::decks::SortOrder::Desc,
                page: PageRequest { page, limit },
            };
            let walk = WalkParts {
                where_clause: "true".into(),
                row_filter: "$1".into(),
                card_sieve: None,
            };
            walked_page_sql(&query, &walk, "SELECT d.id FROM decks d", "LIMIT 1").is_some()
        };
        assert!(walked(DeckSort::EditedAt, 1, 20));
        assert!(walked(DeckSort::CreatedAt, 20, 100));
        assert!(!walked(DeckSort::CreatedAt, 21, 100));
        for counter in [DeckSort::Views, DeckSort::Likes, DeckSort::Trending] {
            assert!(!walked(counter, 1, 20));
        }
    }
}
