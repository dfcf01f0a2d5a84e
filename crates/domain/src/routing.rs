//! Which database answers a request: the one place that decides between the primary and its
//! read replicas (contract, section 8). Each database has its own [`Services`], wired over its
//! own repositories; the router hands a read the services of the database that should answer
//! it, so neither the handlers nor the queries ever choose.
//!
//! The rule: reads by callers without a user identity (anonymous, partner-only) may go to a
//! replica whose replay lag is under the limit; callers with a user identity, every write and
//! every credential check go to the primary. No replica within the lag: the primary. The
//! primary unreachable: any reachable replica, however far behind, since a stale answer beats
//! none for data that anonymous callers may read anyway.

use std::sync::Arc;
use std::time::Duration;

use crate::identity::Principal;
use crate::services::Services;

/// A database of this instance: the primary, or the replica at this position of
/// `DATABASE_REPLICA_URL` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Database {
    Primary,
    Replica(usize),
}

impl Database {
    /// The name `/readyz` and `/metrics` report: `primary`, `replica-1`, `replica-2`, ...
    /// (never the URL, which may hold a password).
    pub fn name(self) -> String {
        match self {
            Self::Primary => "primary".to_owned(),
            Self::Replica(index) => format!("replica-{}", index + 1),
        }
    }
}

/// Replication as last measured by this instance (implemented by the PostgreSQL adapter's
/// monitor, which asks every database at least once a second).
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait ReplicationStatus: Send + Sync {
    /// Whether the primary answered the last measurement.
    fn primary_reachable(&self) -> bool;

    /// How far replica `index` is behind the primary now; `None` when it did not answer the
    /// last measurement or has not been measured yet.
    fn replica_lag(&self, index: usize) -> Option<Duration>;
}

/// The primary's services and the replicas', with the rule that picks one for a read.
#[derive(Clone)]
pub struct ReadRouter {
    primary: Services,
    replicas: Arc<[Services]>,
    status: Option<Arc<dyn ReplicationStatus>>,
    max_lag: Duration,
}

impl ReadRouter {
    /// No replicas: everything goes to the primary.
    pub fn primary_only(primary: Services) -> Self {
        Self {
            primary,
            replicas: Arc::new([]),
            status: None,
            max_lag: Duration::ZERO,
        }
    }

    /// The primary, the replicas' services (in the order of `DATABASE_REPLICA_URL`), what is
    /// known of their lag, and the most lag a read may see when the primary answers.
    pub fn new(
        primary: Services,
        replicas: Vec<Services>,
        status: Arc<dyn ReplicationStatus>,
        max_lag: Duration,
    ) -> Self {
        Self {
            primary,
            replicas: replicas.into(),
            status: Some(status),
            max_lag,
        }
    }

    pub fn primary(&self) -> &Services {
        &self.primary
    }

    /// Every replica with its lag now (`None`: unreachable or not yet measured).
    pub fn replicas(&self) -> impl Iterator<Item = (Database, &Services, Option<Duration>)> {
        self.replicas
            .iter()
            .enumerate()
            .map(|(index, services)| (Database::Replica(index), services, self.replica_lag(index)))
    }

    /// Where a read that a replica may serve goes, for `principal`.
    pub fn route_read(&self, principal: &Principal) -> Database {
        let Some(status) = &self.status else {
            return Database::Primary;
        };
        if principal.user.is_some() {
            return Database::Primary;
        }
        let lags: Vec<_> = (0..self.replicas.len())
            .map(|index| status.replica_lag(index))
            .collect();
        choose_replica(&lags, status.primary_reachable(), self.max_lag)
    }

    /// The services of `database`.
    pub fn services(&self, database: Database) -> &Services {
        match database {
            Database::Primary => &self.primary,
            Database::Replica(index) => self.replicas.get(index).unwrap_or(&self.primary),
        }
    }

    fn replica_lag(&self, index: usize) -> Option<Duration> {
        self.status.as_ref()?.replica_lag(index)
    }
}

/// The database for a read a replica may serve, given each replica's lag (`None`: unreachable):
/// the freshest replica under `max_lag`; else the primary; else, with the primary unreachable,
/// the freshest replica that answers.
fn choose_replica(
    lags: &[Option<Duration>],
    primary_reachable: bool,
    max_lag: Duration,
) -> Database {
    let freshest = lags
        .iter()
        .enumerate()
        .filter_map(|(index, lag)| Some((index, (*lag)?)))
        .min_by_key(|(_, lag)| *lag);
    match freshest {
        Some((index, lag)) if lag < max_lag || !primary_reachable => Database::Replica(index),
        _ => Database::Primary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Duration = Duration::from_millis(1000);

    fn ms(millis: u64) -> Option<Duration> {
        Some(Duration::from_millis(millis))
    }

    #[test]
    fn the_freshest_replica_within_the_limit_serves() {
        assert_eq!(
            choose_replica(&[ms(400), ms(20), None], true, LIMIT),
            Database::Replica(1)
        );
        assert_eq!(
            choose_replica(&[ms(999)], true, LIMIT),
            Database::Replica(0)
        );
    }

    #[test]
    fn the_primary_serves_when_no_replica_is_within_the_limit() {
        assert_eq!(
            choose_replica(&[ms(1000), None], true, LIMIT),
            Database::Primary
        );
        assert_eq!(
            choose_replica(&[None, None], true, LIMIT),
            Database::Primary
        );
        assert_eq!(choose_replica(&[], true, LIMIT), Database::Primary);
    }

    #[test]
    fn with_the_primary_unreachable_any_answering_replica_serves() {
        assert_eq!(
            choose_replica(&[ms(90_000), ms(5_000)], false, LIMIT),
            Database::Replica(1)
        );
        // Nothing answers: the primary's 503 is the honest answer.
        assert_eq!(choose_replica(&[None], false, LIMIT), Database::Primary);
    }

    #[test]
    fn databases_are_named_without_their_urls() {
        assert_eq!(Database::Primary.name(), "primary");
        assert_eq!(Database::Replica(0).name(), "replica-1");
    }
}
