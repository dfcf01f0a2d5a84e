//! Nothing grows without bound (contract §7): every kind of record that stops mattering after a
//! while (expired codes, sessions and tokens, revoked tokens after a week, spent DPoP `jti`s and
//! signatures, idempotency records, pageview dedupe rows, sign-in failure counts) is a named
//! [`PruneJob`], deleted in small batches by [`PruneService::prune_round`], which every
//! instance runs on a timer.
//!
//! A store lists its jobs (`Repositories::prune_jobs`), one line each: a name, how long a
//! record is [`Kept`], and the [`PruneBatch`] that deletes a batch. How long is the domain's
//! word, resolved here from the settings; what "dead before" means for a table (its expiry, its
//! revocation time) is the store's, stated in that one line.

use std::sync::Arc;

use async_trait::async_trait;
use time::{Duration, OffsetDateTime};

use crate::system::Clock;

/// Deletes a batch of dead records of one kind.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait PruneBatch: Send + Sync {
    /// Deletes at most `limit` records whose time (as the job defines it: an expiry, a
    /// revocation) is at or before `before`; returns how many it deleted. One short statement
    /// (or lock section): it never waits on rows another instance is pruning or a request is
    /// writing, so any number of instances may run it at once.
    async fn prune_batch(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64>;
}

/// How long a record is kept after its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// Until its own expiry (`before` is now).
    UntilExpiry,
    /// A revoked token: [`REVOKED_KEPT_FOR`] after its revocation, so uses of it are still
    /// told apart from unknown tokens (and counted by the revoked-token block) meanwhile.
    AfterRevocation,
    /// A pageview dedupe row: the dedupe window (`DECKHAND_PAGEVIEW_DEDUPE_SECS`).
    PageviewWindow,
    /// A sign-in failure count: the throttling window (`SignInThrottle::window`).
    SignInWindow,
    /// An event: the feed's retention (`DECKHAND_EVENT_RETENTION_DAYS`).
    EventRetention,
    /// An expired access token: [`REVOKED_KEPT_FOR`] after its expiry, so a late use of it
    /// is still answered `SERVICE_OAUTH2_TOKEN_EXPIRED` rather than as an unknown token.
    AfterExpiry,
    /// A fixed time after the record's time.
    For(Duration),
}

/// How long revoked tokens are kept (contract §7).
pub const REVOKED_KEPT_FOR: Duration = Duration::days(7);

/// One kind of record to prune.
#[derive(Clone)]
pub struct PruneJob {
    /// What is pruned, for logs and metrics ("authorization codes").
    pub name: &'static str,
    pub kept: Kept,
    pub records: Arc<dyn PruneBatch>,
}

impl PruneJob {
    pub fn new(name: &'static str, kept: Kept, records: impl PruneBatch + 'static) -> Self {
        Self {
            name,
            kept,
            records: Arc::new(records),
        }
    }
}

impl std::fmt::Debug for PruneJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PruneJob")
            .field("name", &self.name)
            .field("kept", &self.kept)
            .finish_non_exhaustive()
    }
}

/// The lengths of time [`Kept`] refers to, from the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub pageview_window: Duration,
    pub sign_in_window: Duration,
    pub event_retention: Duration,
}

impl Retention {
    /// Records of `kept` whose time is at or before this are dead at `now`.
    pub fn dead_before(&self, kept: Kept, now: OffsetDateTime) -> OffsetDateTime {
        now - match kept {
            Kept::UntilExpiry => Duration::ZERO,
            Kept::AfterRevocation | Kept::AfterExpiry => REVOKED_KEPT_FOR,
            Kept::PageviewWindow => self.pageview_window,
            Kept::SignInWindow => self.sign_in_window,
            Kept::EventRetention => self.event_retention,
            Kept::For(duration) => duration,
        }
    }
}

/// What one round pruned of one job.
#[derive(Debug)]
pub struct Pruned {
    pub name: &'static str,
    /// Records deleted, or the error that stopped the job this round (the others go on).
    pub deleted: anyhow::Result<u64>,
}

/// Runs the store's prune jobs.
#[derive(Clone)]
pub struct PruneService {
    jobs: Arc<[PruneJob]>,
    clock: Arc<dyn Clock>,
    retention: Retention,
}

impl PruneService {
    pub fn new(jobs: Vec<PruneJob>, clock: Arc<dyn Clock>, retention: Retention) -> Self {
        Self {
            jobs: jobs.into(),
            clock,
            retention,
        }
    }

    /// The names of the jobs, in the order they run.
    pub fn job_names(&self) -> Vec<&'static str> {
        self.jobs.iter().map(|job| job.name).collect()
    }

    /// One round: each job deletes batches of at most `batch` records until a batch comes back
    /// short or `max_batches` ran (what is left waits for the next round). Batches are
    /// sequential, so a round holds at most one connection.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn prune_round(&self, batch: u32, max_batches: u32) -> Vec<Pruned> {
        let mut report = Vec::with_capacity(self.jobs.len());
        for job in self.jobs.iter() {
            let before = self.retention.dead_before(job.kept, self.clock.now());
            let mut deleted = Ok(0);
            for _ in 0..max_batches {
                match job.records.prune_batch(before, batch).await {
                    Ok(rows) => {
                        deleted = deleted.map(|total| total + rows);
                        if rows < u64::from(batch) {
                            break;
                        }
                    }
                    Err(error) => {
                        deleted = Err(error.context(format!("pruning {}", job.name)));
                        break;
                    }
                }
            }
            report.push(Pruned {
                name: job.name,
                deleted,
            });
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use futures_executor::block_on;
    use mockall::predicate::eq;
    use time::macros::datetime;

    use super::*;
    use crate::system::FixedClock;

    const NOW: OffsetDateTime = datetime!(2026-03-01 12:00 UTC);

    fn retention() -> Retention {
        Retention {
            pageview_window: Duration::hours(1),
            sign_in_window: Duration::minutes(15),
            event_retention: Duration::days(30),
        }
    }

    #[test]
    fn each_kind_of_record_is_dead_after_its_own_time() {
        let r = retention();
        assert_eq!(r.dead_before(Kept::UntilExpiry, NOW), NOW);
        assert_eq!(
            r.dead_before(Kept::AfterRevocation, NOW),
            NOW - Duration::days(7)
        );
        assert_eq!(
            r.dead_before(Kept::PageviewWindow, NOW),
            NOW - Duration::hours(1)
        );
        assert_eq!(
            r.dead_before(Kept::SignInWindow, NOW),
            NOW - Duration::minutes(15)
        );
        assert_eq!(
            r.dead_before(Kept::For(Duration::days(30)), NOW),
            NOW - Duration::days(30)
        );
    }

    #[test]
    fn a_round_takes_batches_until_one_is_short_and_an_error_stops_only_its_job() {
        let mut full = MockPruneBatch::new();
        let mut sizes = vec![10_u64, 10, 3].into_iter();
        full.expect_prune_batch()
            .with(eq(NOW - Duration::days(7)), eq(10))
            .times(3)
            .returning(move |_, _| Ok(sizes.next().unwrap_or(0)));
        let mut endless = MockPruneBatch::new();
        endless
            .expect_prune_batch()
            .with(eq(NOW), eq(10))
            .times(4)
            .returning(|_, _| Ok(10));
        let mut failing = MockPruneBatch::new();
        failing
            .expect_prune_batch()
            .times(1)
            .returning(|_, _| Err(anyhow::anyhow!("down")));
        let service = PruneService::new(
            vec![
                PruneJob::new("revoked", Kept::AfterRevocation, full),
                PruneJob::new("failing", Kept::UntilExpiry, failing),
                PruneJob::new("endless", Kept::UntilExpiry, endless),
            ],
            Arc::new(FixedClock::at(NOW)),
            retention(),
        );
        let report = block_on(service.prune_round(10, 4));
        let shown: Vec<_> = report
            .iter()
            .map(|pruned| (pruned.name, pruned.deleted.as_ref().ok().copied()))
            .collect();
        assert_eq!(
            shown,
            [
                ("revoked", Some(23)),
                ("failing", None),
                ("endless", Some(40))
            ]
        );
    }
}
