//! Streaming replicas: the repositories that read from them, and the monitor that measures how
//! far behind each one is (contract, section 8; docs/operations.md, "Scaling out").
//!
//! **What lag means.** A replica's lag is how long ago the primary had written no more than the
//! replica has now replayed: the replica shows everything the primary had committed that long
//! ago. The monitor samples the primary's `pg_current_wal_lsn()` and each replica's
//! `pg_last_wal_replay_lsn()` every [`interval`]; the newest primary sample a replica has
//! replayed is the moment it is caught up to, and its lag is the time since then. Comparing
//! positions in the write-ahead log rather than `now() - pg_last_xact_replay_timestamp()` keeps
//! an idle primary from looking like a lagging replica (that timestamp stops moving when
//! nothing is written), and the lag read at any moment grows until the next sample proves the
//! replica caught up, so it is never younger than the truth by more than a sample's round trip.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::ports::Repositories;
use deckhand_domain::routing::ReplicationStatus;
use diesel::sql_types::{Int8, Nullable};
use diesel_async::RunQueryDsl;
use tokio::time::Instant;

use crate::error;
use crate::listener::{Listener, lock_state};
use crate::pool::{Pool, checkout};

/// The primary's repositories and each replica's, and the lag monitor the router reads.
pub struct Replicated {
    pub primary: Repositories,
    /// In the order of the pools given to [`replicated`].
    pub replicas: Vec<Repositories>,
    pub status: Arc<dyn ReplicationStatus>,
}

/// The primary's repositories over `primary`, and for each of `replicas` the same repositories
/// with the reads a replica may serve (decks, guides, the catalog, the event feed) on it; what
/// it may not serve (credentials, OAuth, writes, idempotency, webhooks) stays on the primary.
/// The primary's LISTENing connection comes from `listen` (see
/// [`crate::repositories_listening_on`]). Starts the lag monitor, measuring every
/// [`interval`]`(max_lag)` for as long as the returned status lives.
pub fn replicated(
    primary: Pool,
    listen: &Pool,
    replicas: Vec<Pool>,
    max_lag: Duration,
) -> Replicated {
    let (primary_repositories, events) =
        crate::repositories_and_events(primary.clone(), &Listener::new(listen.clone()));
    let replica_repositories = replicas
        .iter()
        .map(|replica| Repositories {
            decks: Arc::new(crate::decks::PgDeckRepository::new(replica.clone())),
            sideboard_guides: Arc::new(crate::sideboards::PgSideboardGuides::new(replica.clone())),
            catalog: Arc::new(crate::catalog::PgCatalog::on_replica(replica.clone())),
            events: Arc::new(events.on_replica(replica.clone())),
            health: Arc::new(crate::health::PgHealth {
                pool: replica.clone(),
                statement_timeout: None,
            }),
            ..primary_repositories.clone()
        })
        .collect();
    let monitor = Arc::new(Monitor::new(replicas.len()));
    tokio::spawn(measure(
        Arc::downgrade(&monitor),
        primary,
        replicas,
        interval(max_lag),
    ));
    Replicated {
        primary: primary_repositories,
        replicas: replica_repositories,
        status: monitor,
    }
}

/// How often the monitor measures: at least every second, and four times within the limit,
/// so that a replica within it is not dropped for want of a fresh sample.
pub fn interval(max_lag: Duration) -> Duration {
    (max_lag / 4).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// How long one measurement waits for a database before calling it unreachable.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Primary samples kept per replica that has not replayed them; past this many the oldest go
/// (the replica is then far beyond any sensible limit anyway).
const MAX_PENDING_SAMPLES: usize = 10_000;

#[derive(Debug)]
struct Monitor {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    primary_reachable: bool,
    replicas: Vec<Progress>,
}

/// What the monitor knows of one replica.
#[derive(Debug, Default)]
struct Progress {
    reachable: bool,
    /// When the primary was last seen at a position this replica has replayed.
    caught_up_at: Option<Instant>,
    /// Primary positions (`(taken at, LSN)`, ascending) this replica has not replayed yet.
    pending: VecDeque<(Instant, i64)>,
}

impl Monitor {
    fn new(replicas: usize) -> Self {
        Self {
            state: Mutex::new(State {
                primary_reachable: true,
                replicas: (0..replicas).map(|_| Progress::default()).collect(),
            }),
        }
    }
}

impl ReplicationStatus for Monitor {
    fn primary_reachable(&self) -> bool {
        lock_state(&self.state).primary_reachable
    }

    fn replica_lag(&self, index: usize) -> Option<Duration> {
        let state = lock_state(&self.state);
        let replica = state
            .replicas
            .get(index)
            .filter(|replica| replica.reachable)?;
        Some(replica.caught_up_at?.elapsed())
    }
}

impl Progress {
    /// The primary was at `lsn` at `taken_at`.
    fn primary_at(&mut self, taken_at: Instant, lsn: i64) {
        match self.pending.back_mut() {
            // The primary has not moved: the newer time stands for the same position.
            Some(last) if last.1 == lsn => last.0 = taken_at,
            _ => self.pending.push_back((taken_at, lsn)),
        }
        if self.pending.len() > MAX_PENDING_SAMPLES {
            self.pending.pop_front();
        }
    }

    /// The replica has replayed up to `lsn` (`None`: it could not be asked).
    fn replayed(&mut self, lsn: Option<i64>) {
        self.reachable = lsn.is_some();
        let Some(lsn) = lsn else { return };
        while let Some(&(taken_at, sample)) = self.pending.front() {
            if sample > lsn {
                break;
            }
            self.caught_up_at = Some(taken_at);
            self.pending.pop_front();
        }
    }
}

/// Measures every `every` until the monitor is dropped.
async fn measure(
    monitor: std::sync::Weak<Monitor>,
    primary: Pool,
    replicas: Vec<Pool>,
    every: Duration,
) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        // Taken before the replicas are asked, so that a replica found at this position was
        // at least this fresh.
        let taken_at = Instant::now();
        let primary_lsn = probe(&primary, PRIMARY_POSITION).await;
        let mut replayed = Vec::with_capacity(replicas.len());
        for replica in &replicas {
            replayed.push(probe(replica, REPLAY_POSITION).await);
        }
        let Some(monitor) = monitor.upgrade() else {
            return;
        };
        let mut state = lock_state(&monitor.state);
        state.primary_reachable = primary_lsn.is_ok();
        for (progress, replayed) in state.replicas.iter_mut().zip(replayed) {
            if let Ok(lsn) = primary_lsn {
                progress.primary_at(taken_at, lsn);
            }
            progress.replayed(replayed.ok());
        }
    }
}

/// The primary's current write position, in bytes since the start of the log.
const PRIMARY_POSITION: &str = "SELECT (pg_current_wal_lsn() - '0/0')::int8 AS lsn";
/// A replica's replay position; NULL on a server that is not replaying (not a replica).
const REPLAY_POSITION: &str = "SELECT (pg_last_wal_replay_lsn() - '0/0')::int8 AS lsn";

#[derive(diesel::QueryableByName)]
struct Position {
    #[diesel(sql_type = Nullable<Int8>)]
    lsn: Option<i64>,
}

/// `sql`'s position on a connection of `pool`, within [`PROBE_TIMEOUT`].
async fn probe(pool: &Pool, sql: &'static str) -> anyhow::Result<i64> {
    let asked = async {
        let mut conn = checkout(pool).await?;
        let position: Position = diesel::sql_query(sql)
            .get_result(&mut conn)
            .await
            .map_err(error::query)?;
        position
            .lsn
            .context("the server is not replaying a primary's log: not a streaming replica")
    };
    let outcome = tokio::time::timeout(PROBE_TIMEOUT, asked)
        .await
        .unwrap_or_else(|_| Err(error::unavailable("no answer within the probe timeout")));
    if let Err(error) = &outcome {
        tracing::debug!(error = %format!("{error:#}"), "replication probe failed");
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_is_caught_up_to_the_newest_primary_position_it_replayed() {
        let start = Instant::now();
        let mut progress = Progress::default();
        progress.primary_at(start, 100);
        progress.primary_at(start + Duration::from_millis(10), 200);
        progress.primary_at(start + Duration::from_millis(20), 300);
        progress.replayed(Some(250));
        assert!(progress.reachable);
        assert_eq!(
            progress.caught_up_at,
            Some(start + Duration::from_millis(10))
        );
        assert_eq!(progress.pending.len(), 1);
        progress.replayed(None);
        assert!(!progress.reachable);
    }

    #[test]
    fn an_idle_primary_keeps_a_replayed_replica_fresh() {
        let start = Instant::now();
        let mut progress = Progress::default();
        for tick in 0..5 {
            progress.primary_at(start + Duration::from_secs(tick), 100);
            progress.replayed(Some(100));
        }
        assert_eq!(progress.caught_up_at, Some(start + Duration::from_secs(4)));
        assert!(progress.pending.is_empty());
    }

    #[test]
    fn the_interval_is_at_least_every_second_and_four_times_within_the_limit() {
        assert_eq!(
            interval(Duration::from_millis(1000)),
            Duration::from_millis(250)
        );
        assert_eq!(interval(Duration::from_secs(60)), Duration::from_secs(1));
        assert_eq!(
            interval(Duration::from_millis(8)),
            Duration::from_millis(10)
        );
    }
}
