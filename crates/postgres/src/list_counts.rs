//! The totals of list pages, decks' and guides' alike. A count is capped one past the result
//! window and remembered by filter combination, stamped with the changes of its list and game
//! (`deck_list_changes`, `guide_list_changes`: counters that every committed write of a game's
//! decks or guides moves, in the writer's own transaction). A page statement reads those
//! changes beside its rows, so a remembered count older than the page is counted again, and no
//! instance shows a total older than a write another instance acknowledged
//! (docs/operations.md, "Totals across instances"). A count far enough past the window outlives
//! changes that cannot bring it back inside ([`COUNT_SURPLUS`]).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::decks::{PageRequest, RESULT_WINDOW};
use diesel::QueryableByName;
use diesel::sql_types::Int8;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use moka::ops::compute::Op;

use crate::error;
use crate::rules::Conditions;

/// How long a list count is kept by this instance. It is reused only while it covers the page
/// ([`StampedCount::covers`]), so the time does not bound staleness: it only brings a count
/// that no change made old back to the database once a minute (a counter set back, say by a
/// restore, is believed no longer than that). Each recount of a long list holds the requests
/// that find it gone for its turn (20 ms at 1,000,000 decks), so a shorter time showed in the
/// latency tail (docs/benchmarks.md). A page that ends the list needs no count at all: its
/// total is known exactly from the page itself.
const COUNT_TTL: Duration = Duration::from_secs(60);
/// How many distinct filter combinations keep a count.
const COUNT_CAPACITY: u64 = 10_000;
/// How far past the result window a count goes. A total past the window is shown as the window,
/// inexact, and each change a list's counter records moves one item in or out of it, so a count
/// that found this many more items than the window holds answers the same through as many
/// changes: a long list read while it is written is not counted again at every write.
const COUNT_SURPLUS: u32 = 1_000;
/// How long a request waits for its turn to count again ([`RememberedCounts::in_turn`]) before
/// it counts on its own: turns take milliseconds, so a longer wait means the counts before it
/// are failing or slow, and waiting behind each of them would add up their times.
const TURN_WAIT: Duration = Duration::from_secs(1);

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
    /// capped [`COUNT_SURPLUS`] past the first item beyond the result window, and the changes
    /// it was counted under (a [`StampedCount`]).
    pub(crate) fn count_sql(self, from: &str, where_clause: &str, game: &str) -> String {
        format!(
            "SELECT count(*) AS matches, {changes} AS list_changes FROM (SELECT 1 FROM {from} \
             WHERE {where_clause} LIMIT {cap}) AS matching",
            changes = self.changes_sql(game),
            cap = RESULT_WINDOW + 1 + COUNT_SURPLUS
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
    /// Whether it answers for a statement which saw `changes`: it counts every write that
    /// statement sees, or it is so far past the result window that the writes it misses cannot
    /// bring the total back inside (each change moves one item in or out). Bumps of a game's
    /// changes queue on its row and commit in order, so a statement that sees a value sees
    /// every write that came before it.
    fn covers(self, changes: i64) -> bool {
        let missed = changes.saturating_sub(self.list_changes);
        missed <= 0 || self.matches.saturating_sub(missed) > i64::from(RESULT_WINDOW)
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
    /// again ([`Self::in_turn`]).
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
        let counted = match self.in_turn(conditions, seen, fresh(&mut *conn)).await? {
            Some(counted) => counted,
            None => fresh(conn).await?,
        };
        Ok(counted.matches())
    }

    /// A count of `conditions` that covers `seen`, counted once however many requests need it
    /// at once: they take turns on the combination (moka's per-key lock), and each takes the
    /// count made in the turn before its own when that covers its page, or runs `count` (not
    /// polled otherwise). A list read while it is written thus costs one count at a time, not
    /// one a request. `None` after [`TURN_WAIT`] without a turn, for the caller to count on its
    /// own rather than wait behind each slow turn in turn.
    async fn in_turn(
        &self,
        conditions: &Conditions,
        seen: i64,
        count: impl Future<Output = anyhow::Result<StampedCount>> + Send,
    ) -> anyhow::Result<Option<StampedCount>> {
        let started = AtomicBool::new(false);
        let mut turn = Box::pin(self.0.entry_by_ref(conditions).and_try_compute_with(
            async |remembered| match remembered {
                Some(entry) if entry.value().covers(seen) => Ok(Op::Nop),
                _ => {
                    started.store(true, Ordering::Relaxed);
                    count.await.map(Op::Put)
                }
            },
        ));
        let taken = match tokio::time::timeout(TURN_WAIT, &mut turn).await {
            Ok(taken) => taken?,
            // This request's own count is under way: finished, never left mid-statement.
            Err(_) if AtomicBool::load(&started, Ordering::Relaxed) => turn.await?,
            Err(_) => return Ok(None),
        };
        // A turn ends with a covering count: the one it found or the one it put.
        Ok(taken.into_entry().map(|counted| counted.into_value()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::statement::Bind;

    fn stamped(matches: i64, list_changes: i64) -> StampedCount {
        StampedCount {
            matches,
            list_changes,
        }
    }

    fn conditions() -> Conditions {
        let mut conditions = Conditions::default();
        conditions.param(Bind::Text("mtg".into()));
        conditions
    }

    #[test]
    fn only_a_count_far_past_the_window_outlives_a_change() {
        let window = i64::from(RESULT_WINDOW);
        let exact = stamped(window, 10);
        assert!(exact.covers(10));
        assert!(
            !exact.covers(11),
            "an exact total is counted again after any change"
        );
        let just_past = stamped(window + 1, 10);
        assert!(!just_past.covers(11), "one removal brings it back inside");
        let at_cap = stamped(window + 1 + i64::from(COUNT_SURPLUS), 10);
        assert!(at_cap.covers(10 + i64::from(COUNT_SURPLUS)));
        assert!(!at_cap.covers(11 + i64::from(COUNT_SURPLUS)));
    }

    #[tokio::test]
    async fn requests_that_find_a_count_old_at_once_count_it_once() {
        let counts = RememberedCounts::new();
        counts.0.insert(conditions(), stamped(5, 1)).await;
        let counted = AtomicUsize::new(0);
        let count = async || {
            counted.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(stamped(6, 2))
        };
        let conditions = conditions();
        let turns =
            futures_util::future::join_all((0..8).map(|_| counts.in_turn(&conditions, 2, count())))
                .await;
        assert_eq!(AtomicUsize::load(&counted, Ordering::Relaxed), 1);
        for turn in turns {
            assert_eq!(turn.unwrap().map(StampedCount::matches), Some(6));
        }
        // A page newer than the count is counted again.
        let newer = counts.in_turn(&conditions, 3, async { Ok(stamped(7, 3)) });
        assert_eq!(newer.await.unwrap().map(StampedCount::matches), Some(7));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_counts_on_its_own_rather_than_wait_behind_a_slow_turn() {
        let counts = RememberedCounts::new();
        let conditions = conditions();
        let slow = counts.in_turn(&conditions, 1, async {
            tokio::time::sleep(Duration::from_secs(15)).await;
            anyhow::bail!("canceling statement due to statement timeout")
        });
        let behind = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let started = tokio::time::Instant::now();
            let taken = counts
                .in_turn(&conditions, 1, async { Ok(stamped(1, 1)) })
                .await;
            (taken.unwrap(), started.elapsed())
        };
        let (slow, (behind, waited)) = tokio::join!(slow, behind);
        assert!(
            slow.is_err(),
            "the slow turn's own count failed after its 15 s"
        );
        assert!(behind.is_none(), "left to count on its own");
        assert_eq!(waited, TURN_WAIT);
    }
}
