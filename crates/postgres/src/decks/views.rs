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

use super::list_query::{PageParts, page_window, rows_by_ids_sql, walked_page_sql};
use super::rows::{PageRow, listing_select};
use crate::rules::{
    Conditions, contains_pattern, deck_conditions_but_name, readable_sql, trending_bump_sql,
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
/// generic plan. A name filter is the exception: the best plan depends on how rare the pattern
/// is. A date-sorted page first walks the head of the list ([`walked_page`]); a page that walk
/// cannot fill has its ids picked by a statement planned on every run for its pattern, and their
/// rows read by one on a generic plan (planned as one statement, its joins took longer to plan,
/// 0.6 ms, than the whole page to run, 0.4 ms; docs/benchmarks.md).
pub(super) async fn page_rows(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
    conditions: &Conditions,
    game: &str,
    short_walks: &ShortWalks,
) -> QueryResult<Vec<PageRow>> {
    if let Some(rows) = walked_page(conn, query, short_walks).await? {
        return Ok(rows);
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
            .statement(rows_by_ids_sql(query, &listing_select(&game)))
            .load(conn)
            .await;
    }
    let select = listing_select(game);
    let sql = if page_conditions.is_constant() {
        parts.first_sql(&select)
    } else {
        parts.sql(&select)
    };
    page_conditions.statement(sql).load(conn).await
}

/// Walks of name-filtered pages that came up short lately ([`walked_page`]), by statement.
pub(super) type ShortWalks = moka::sync::Cache<Statement, ()>;

/// How long a short walk is remembered: meanwhile the same page goes straight to the statements
/// planned for its pattern, so a rare pattern pays for its walk once a minute, not every time.
pub(super) const SHORT_WALK_TTL: StdDuration = StdDuration::from_secs(60);

/// A name-filtered page of a date sort when the first decks of the list hold all of it
/// ([`walked_page_sql`], [`list_query::NAME_WALK`] of them): one statement on a generic plan.
/// `None` when they do not (remembered in `short_walks`), for a counter sort, or without a
/// name filter.
async fn walked_page(
    conn: &mut AsyncPgConnection,
    query: &DeckQuery,
    short_walks: &ShortWalks,
) -> QueryResult<Option<Vec<PageRow>>> {
    let Some(needle) = query.filters.name_contains.as_deref() else {
        return Ok(None);
    };
    let (mut conditions, game) = deck_conditions_but_name(query);
    let where_clause = conditions.sql();
    let pattern = conditions.param(Bind::Text(contains_pattern(needle)));
    let window = page_window(&mut conditions, query.page);
    let select = listing_select(&game);
    let Some(sql) = walked_page_sql(query, &select, &where_clause, &pattern, &window) else {
        return Ok(None);
    };
    let walk = conditions.statement(sql);
    if short_walks.contains_key(&walk) {
        return Ok(None);
    }
    let rows: Vec<PageRow> = (&walk).load(conn).await?;
    if rows.len() == query.page.limit as usize {
        return Ok(Some(rows));
    }
    short_walks.insert(walk, ());
    Ok(None)
}
