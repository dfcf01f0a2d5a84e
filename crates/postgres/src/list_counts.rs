//! The totals of list pages, decks' and guides' alike. A count is capped one past the result
//! window and remembered by filter combination, stamped with the changes of its list and game
//! (`deck_list_changes`, `guide_list_changes`: counters that every committed write of a game's
//! decks or guides moves, in the writer's own transaction). A page statement reads those
//! changes beside its rows, so a remembered count older than the page is counted again, and no
//! instance shows a total older than a write another instance acknowledged
//! (docs/operations.md, "Totals across instances").

use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::decks::{PageRequest, RESULT_WINDOW};
use diesel::QueryableByName;
use diesel::sql_types::Int8;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use moka::ops::compute::Op;

use crate::error;
use crate::rules::Conditions;

/// How long a list count is kept by this instance. It is reused only while no instance has
/// changed the list since it was counted ([`StampedCount::covers`]), so the time bounds memory,
/// not staleness. A page that ends the list needs no count at all: its total is known exactly
/// from the page itself.
const COUNT_TTL: Duration = Duration::from_secs(5);
/// How many distinct filter combinations keep a count.
const COUNT_CAPACITY: u64 = 10_000;

/// A list whose totals are remembered, by the counter table its writes move.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listed {
    Decks,
    Guides,
}

impl Listed {
    /// The list's changes in the game `game` (an SQL literal or placeholder) as the statement
    /// that reads them sees them: a page reads them beside its rows, a count beside its count.
    pub(crate) fn changes_sql(self, game: &str) -> String {
        let table = match self {
            Self::Decks => "deck_list_changes",
            Self::Guides => "guide_list_changes",
        };
        format!("coalesce((SELECT c.changes FROM {table} c WHERE c.game = {game}), 0)")
    }

    /// The count of the rows of `from` (a table and its alias) that match `where_clause`,
    /// capped one past the result window, and the changes it was counted under (a
    /// [`StampedCount`]).
    pub(crate) fn count_sql(self, from: &str, where_clause: &str, game: &str) -> String {
        format!(
            "SELECT count(*) AS matches, {changes} AS list_changes FROM (SELECT 1 FROM {from} \
             WHERE {where_clause} LIMIT {cap}) AS matching",
            changes = self.changes_sql(game),
            cap = RESULT_WINDOW + 1
        )
    }
}

/// A capped count and the list's changes its statement saw.
#[derive(Debug, Clone, Copy, QueryableByName)]
pub(crate) struct StampedCount {
    #[diesel(sql_type = Int8)]
    matches: i64,
    #[diesel(sql_type = Int8)]
    list_changes: i64,
}

impl StampedCount {
    /// Whether it counts every write that a statement which saw `changes` sees. Bumps of a
    /// game's changes queue on its row and commit in order, so a statement that sees a value
    /// sees every write that came before it.
    fn covers(self, changes: i64) -> bool {
        self.list_changes >= changes
    }

    fn matches(self) -> u64 {
        u64::try_from(self.matches).unwrap_or(0)
    }
}

/// Capped list counts by filter combination, each with the changes it was counted under.
/// Requests that want the same missing or outdated count wait for one statement instead of
/// each running it.
pub(crate) struct RememberedCounts(moka::future::Cache<Conditions, StampedCount>);

impl RememberedCounts {
    pub(crate) fn new() -> Self {
        Self(
            moka::future::Cache::builder()
                .max_capacity(COUNT_CAPACITY)
                .time_to_live(COUNT_TTL)
                .build(),
        )
    }

    /// The total of a page of `on_page` items at `page`, whose statement saw the list's
    /// changes `seen` (`None` when it read no row). A short page that is not past the end is
    /// the last one and tells the total exactly; otherwise the matches of `conditions` are
    /// counted by `count_sql` (a [`Listed::count_sql`]), or remembered from a count at least
    /// as new as the page.
    pub(crate) async fn total(
        &self,
        conn: &mut AsyncPgConnection,
        page: PageRequest,
        on_page: usize,
        conditions: &Conditions,
        count_sql: String,
        seen: Option<i64>,
    ) -> anyhow::Result<u64> {
        // Items up to the end of this page; none when it is past the end.
        let shown = match on_page {
            0 => 0,
            on_page => u64::from(page.offset()) + on_page as u64,
        };
        let last_page = on_page < page.limit as usize && (on_page > 0 || page.offset() == 0);
        if last_page {
            return Ok(shown);
        }
        // The items a count can miss are those written after this page was read.
        let counted = self.count(conn, conditions, count_sql, seen).await?;
        Ok(counted.max(shown))
    }

    /// The matches of `conditions` at least as new as `seen`. A remembered count older than
    /// that misses a write some instance acknowledged before this request, so it is counted
    /// again: once, however many requests need it at once. They take turns on the combination
    /// (moka's per-key lock), and each takes the count made by the one before it when that
    /// count covers its page, so a list read while it is written costs one count at a time,
    /// not one a request.
    async fn count(
        &self,
        conn: &mut AsyncPgConnection,
        conditions: &Conditions,
        count_sql: String,
        seen: Option<i64>,
    ) -> anyhow::Result<u64> {
        let statement = conditions.statement(count_sql);
        let fresh = async |conn: &mut AsyncPgConnection| {
            (&statement)
                .get_result::<StampedCount>(conn)
                .await
                .map_err(error::query)
                .context("counting a list")
        };
        let Some(seen) = seen else {
            return Ok(fresh(conn).await?.matches());
        };
        if let Some(remembered) = self.0.get(conditions).await
            && remembered.covers(seen)
        {
            return Ok(remembered.matches());
        }
        let turn = self
            .0
            .entry_by_ref(conditions)
            .and_try_compute_with(async |remembered| match remembered {
                Some(entry) if entry.value().covers(seen) => Ok(Op::Nop),
                _ => fresh(&mut *conn).await.map(Op::Put),
            })
            .await?;
        match turn.into_entry() {
            Some(counted) => Ok(counted.into_value().matches()),
            // Not reached: a turn without a covering count puts one.
            None => Ok(fresh(conn).await?.matches()),
        }
    }
}
