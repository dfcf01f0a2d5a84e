//! What readers view of decks: list pages, in the statements `list_query.rs` shapes, and a
//! counted view of one deck.

use std::sync::LazyLock;
use std::time::Duration as StdDuration;

use deckhand_domain::decks::DeckQuery;
use deckhand_domain::readable::Reach;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Int8, Nullable, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::list_query::{
    PageParts, WalkParts, gathered_page_sql, page_window, rows_by_ids_sql, walked_page_sql,
};
use super::rows::{PageRow, listing_select};
use crate::rules::{
    Conditions, Seen, deck_conditions, deck_conditions_but_row_filters, readable_sql,
    trending_bump_sql,
};
use crate::statement::{Bind, Statement};

/// How many distinct page statements keep a short walk.
pub(super) const SHORT_WALK_CAPACITY: u64 = 10_000;

#[derive(QueryableByName)]
pub(super) struct ViewRow {
    #[diesel(sql_type = Bool)]
    pub(super) visible: bool,
    #[diesel(sql_type = Nullable<Int8>)]
    pub(super) pageviews: Option<i64>,
    #[diesel(sql_type = Bool)]
    pub(super) incremented: bool,
}

/// Checks that the reader may see the deck, counts a view and updates the trending score, in
/// one statement (see the port's contract); the deck row is only probed by its primary key.
/// The visibility condition is the domain's read rule by id ([`readable_sql`], `$7` the reader),
/// the score's the domain's trending bump ([`trending_bump_sql`], `$5` the weight). The insert's
/// conflict clause is the dedupe: a visitor's row is only refreshed when its last counted view
/// is outside the window, and concurrent inserts of one key wait on each other. The record
/// names its deck without a foreign key, whose check (a query and a lock on the deck's row per
/// counted view) cost a fifth of the statement: only a deck just found is ever named.
pub(super) static COUNT_VIEW: LazyLock<String> = LazyLock::new(|| {
    let readable = readable_sql("d", Reach::ById, Some("$7"));
    let bump = trending_bump_sql("trending", "$5");
    format!(
        "WITH target AS (
    SELECT d.id FROM decks d WHERE d.id = $1 AND d.game = $6 AND {readable}
), counted AS (
    INSERT INTO deck_views AS v (deck_id, visitor, counted_at) SELECT id, $2, $3 FROM target
    ON CONFLICT (deck_id, visitor) DO UPDATE SET counted_at = EXCLUDED.counted_at
        WHERE v.counted_at <= $4
    RETURNING 1
), bumped AS (
    UPDATE deck_stats SET pageviews = pageviews + 1, trending = {bump}
    WHERE deck_id = $1 AND EXISTS (SELECT 1 FROM counted)
    RETURNING pageviews
)
SELECT EXISTS (SELECT 1 FROM target) AS visible,
       coalesce((SELECT pageviews FROM bumped),
                (SELECT pageviews FROM deck_stats WHERE deck_id = $1)) AS pageviews,
       EXISTS (SELECT 1 FROM bumped) AS incremented"
    )
});

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

/// The rows of a list page, in one statement that PostgreSQL plans once per connection:
/// [`PageParts::first_sql`] when it has no parameters, else [`PageParts::sql`], of which PostgreSQL keeps a
/// generic plan. A name or card filter is the exception: the best plan depends on how common
/// the name or the cards are. A date-sorted page first walks the head of the list
/// ([`walked_page`]); a page that walk cannot fill is gathered when only cards filter it and
/// at most [`list_query::GATHERED_AT_MOST`] decks hold them ([`gathered_page`]), else its ids
/// are picked by a statement planned on every run for its values, and their rows read by one
/// on a generic plan (planned as one statement, its joins
/// took longer to plan, 0.6 ms, than the whole page to run, 0.4 ms; docs/benchmarks.md).
pub(super) async fn page_rows(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
    conditions: &Conditions,
    game: &str,
    short_walks: &ShortWalks,
) -> QueryResult<Vec<PageRow>> {
    match walked_page(conn, query, short_walks).await? {
        Walk::Filled(rows) => return Ok(rows),
        Walk::Short(walk, AfterShortWalk::Gather) => {
            if let Some(rows) = gathered_page(conn, query).await? {
                return Ok(rows);
            }
            // More decks hold the cards than a gathering reads (or none on this page).
            short_walks.insert(walk, AfterShortWalk::Plan);
        }
        Walk::Short(_, AfterShortWalk::Plan) | Walk::Skipped => {}
    }
    let mut page_conditions = conditions.clone();
    let window = page_window(&mut page_conditions, query.page);
    let where_clause = conditions.sql();
    let parts = PageParts {
        query,
        game,
        where_clause: &where_clause,
        window: &window,
    };
    if conditions.plan_each_run() {
        let ids: Vec<IdRow> = page_conditions
            .statement(parts.ids_sql())
            .load(conn)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut by_ids = Conditions::default();
        // `$1` of `rows_by_ids_sql`.
        by_ids.param(Bind::Uuids(ids.into_iter().map(|row| row.id).collect()));
        let game = by_ids.game(&query.game);
        return by_ids
            .statement(rows_by_ids_sql(
                query,
                &listing_select(&game, query.with_summary),
            ))
            .load(conn)
            .await;
    }
    let select = listing_select(game, query.with_summary);
    let sql = if page_conditions.is_constant() {
        parts.first_sql(&select)
    } else {
        parts.sql(&select)
    };
    page_conditions.statement(sql).load(conn).await
}

/// Walks of filtered pages that came up short lately ([`walked_page`]), by statement, and where
/// each such page goes instead.
pub(super) type ShortWalks = moka::sync::Cache<Statement, AfterShortWalk>;

/// Where a page goes when its walk comes up short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterShortWalk {
    /// Filtered by cards alone: to [`gathered_page`].
    Gather,
    /// Filtered by name, or by cards more decks hold than a gathering reads: to the
    /// statements planned for its values.
    Plan,
}

/// What a walk of the head of the list made of a page.
enum Walk {
    Filled(Vec<PageRow>),
    /// The walk's statement, the key of [`ShortWalks`], and where the page goes.
    Short(Statement, AfterShortWalk),
    /// A page with no name or card filter, of a counter sort, or past the walked head.
    Skipped,
}

/// How long a short walk is remembered: meanwhile the same page goes straight to the statements
/// chosen after it, so a rare name or card pays for its walk once a minute, not every time.
pub(super) const SHORT_WALK_TTL: StdDuration = StdDuration::from_secs(60);

/// A page filtered by name or card, of a date sort, when the first decks of the list hold all
/// of it ([`walked_page_sql`], [`list_query::WALK`] of them): one statement on a generic plan.
/// A walk that comes up short is remembered in `short_walks`, with where its page goes
/// instead: gathered when only cards filter it, else planned.
async fn walked_page(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
    short_walks: &ShortWalks,
) -> QueryResult<Walk> {
    let (mut conditions, game) = deck_conditions_but_row_filters(query);
    let where_clause = conditions.sql();
    let row_filters = conditions.row_filters(&query.filters, Seen::NotByPlan);
    if row_filters.is_empty() {
        return Ok(Walk::Skipped);
    }
    let walk = WalkParts {
        where_clause,
        row_filter: row_filters.join(" AND "),
        card_sieve: conditions.card_sieve("w", &query.filters),
    };
    let window = page_window(&mut conditions, query.page);
    let select = listing_select(&game, query.with_summary);
    let Some(sql) = walked_page_sql(query, &walk, &select, &window) else {
        return Ok(Walk::Skipped);
    };
    let walk = conditions.statement(sql);
    if let Some(after) = short_walks.get(&walk) {
        return Ok(Walk::Short(walk, after));
    }
    let rows: Vec<PageRow> = (&walk).load(conn).await?;
    if rows.len() == query.page.limit as usize {
        return Ok(Walk::Filled(rows));
    }
    let after = if query.filters.name_contains.is_none() {
        AfterShortWalk::Gather
    } else {
        AfterShortWalk::Plan
    };
    short_walks.insert(walk.clone(), after);
    Ok(Walk::Short(walk, after))
}

/// A page filtered by cards a short walk found rare, gathered from the card index
/// ([`gathered_page_sql`]): one statement on a generic plan. `None` when more decks hold the
/// cards than a gathering reads, when the page is empty, and for a counter sort.
async fn gathered_page(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
) -> QueryResult<Option<Vec<PageRow>>> {
    let (mut conditions, game) = deck_conditions(query, Seen::NotByPlan);
    let where_clause = conditions.sql();
    let window = page_window(&mut conditions, query.page);
    let select = listing_select(&game, query.with_summary);
    let Some(sql) = gathered_page_sql(query, &select, &where_clause, &window) else {
        return Ok(None);
    };
    let rows: Vec<PageRow> = conditions.statement(sql).load(conn).await?;
    Ok(Some(rows).filter(|rows| !rows.is_empty()))
}
