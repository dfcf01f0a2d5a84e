//! Choosing and opening the store.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::ports::{Repositories, SystemPorts};
use deckhand_domain::routing::{ReadRouter, ReplicationStatus};
use deckhand_domain::settings::ServiceSettings;
use deckhand_postgres::{Pool, Pooler};

use crate::settings::{DbPooler, ReplicaSettings, StoreSettings};

/// The repositories of the configured store; PostgreSQL ones after applying migrations when
/// `migrate` is set. Migrations and LISTEN need sessions of their own (an advisory lock, a
/// listening connection), so they go straight to PostgreSQL (`StoreSettings::direct_url`);
/// everything else goes through `DATABASE_URL`, which may be a transaction-mode pooler.
pub async fn open(settings: &StoreSettings, migrate: bool) -> anyhow::Result<Repositories> {
    let Some(url) = settings.database_url.as_deref() else {
        return Ok(deckhand_memory::repositories());
    };
    let primary = connect_primary(settings, url, migrate).await?;
    let pool = primary.pool.clone();
    let repositories = deckhand_postgres::repositories_listening_on(primary.pool, primary.listen);
    Ok(with_pooled_health(settings, &pool, repositories))
}

/// Through a transaction-mode pooler, the statement timeout is the server's own setting, so it
/// must equal `DECKHAND_DB_STATEMENT_TIMEOUT_MS` (else each new connection would be refused
/// with a 503 for every request): a difference stops the start with its message and fix. A
/// pooler or server that cannot be asked does not; as without a pooler, the service starts
/// and `/readyz` says the store is down.
async fn refuse_a_different_statement_timeout(
    settings: &StoreSettings,
    url: &str,
) -> anyhow::Result<()> {
    if pooler(settings) != Pooler::Transaction {
        return Ok(());
    }
    match deckhand_postgres::check_statement_timeout(url, settings.statement_timeout()).await {
        Err(error) if deckhand_domain::error::misconfiguration(&error).is_some() => Err(error),
        Err(error) => {
            tracing::warn!(
                error = format!("{error:#}"),
                "could not read the server's statement_timeout through the pooler at start"
            );
            Ok(())
        }
        Ok(()) => Ok(()),
    }
}

/// `repositories` whose readiness check, through a transaction-mode pooler, also holds the
/// server's `statement_timeout` to the setting: an operator can change it under a running
/// service, and `/readyz` then reports it.
fn with_pooled_health(
    settings: &StoreSettings,
    pool: &Pool,
    mut repositories: Repositories,
) -> Repositories {
    if pooler(settings) == Pooler::Transaction {
        repositories.health =
            deckhand_postgres::pooled_health(pool.clone(), settings.statement_timeout());
    }
    repositories
}

/// The PostgreSQL repositories; operator commands make no sense on a memory store that dies
/// with the command.
pub async fn open_postgres(settings: &StoreSettings) -> anyhow::Result<Repositories> {
    anyhow::ensure!(
        settings.database_url.is_some(),
        "this command needs DATABASE_URL: the in-memory store lives only inside a running `deckhand serve`"
    );
    open(settings, false).await
}

/// The primary's pools: `pool` for statements (through the pooler, if any) and `listen` for
/// the connection that LISTENs (PostgreSQL itself).
struct PrimaryPools {
    pool: Pool,
    listen: Pool,
}

/// Migrates the primary when `migrate` is set, then opens its pools.
async fn connect_primary(
    settings: &StoreSettings,
    url: &str,
    migrate: bool,
) -> anyhow::Result<PrimaryPools> {
    let direct = settings.direct_url().unwrap_or(url);
    if migrate {
        deckhand_postgres::run_migrations(direct)
            .await
            .context("applying database migrations")?;
    }
    refuse_a_different_statement_timeout(settings, url).await?;
    let pool = connect(settings, url)
        .await
        .context("connecting to PostgreSQL")?;
    let listen = if direct == url && pooler(settings) == Pooler::None {
        pool.clone()
    } else {
        // Listeners take their connections out of this pool for good, one at a time.
        deckhand_postgres::connect_with_timeout(direct, 1, settings.statement_timeout())
            .await
            .context("connecting to PostgreSQL for LISTEN")?
    };
    Ok(PrimaryPools { pool, listen })
}

/// A pool of connections to `url` (the primary or a replica), as `DECKHAND_DB_POOLER` says.
async fn connect(settings: &StoreSettings, url: &str) -> anyhow::Result<Pool> {
    deckhand_postgres::connect_through(
        url,
        settings.db_pool_size as usize,
        settings.statement_timeout(),
        pooler(settings),
    )
    .await
}

fn pooler(settings: &StoreSettings) -> Pooler {
    match settings.db_pooler {
        DbPooler::None => Pooler::None,
        DbPooler::Transaction => Pooler::Transaction,
    }
}

/// What `deckhand serve` runs on: the primary's repositories and, when replicas are set, theirs.
pub struct Opened {
    pub primary: Repositories,
    pub replicas: Option<Replicas>,
}

/// The replicas' repositories (in the order of `DATABASE_REPLICA_URL`), the monitor of their
/// lag and the most lag a read may see.
pub struct Replicas {
    pub repositories: Vec<Repositories>,
    pub status: Arc<dyn ReplicationStatus>,
    pub max_lag: Duration,
}

impl Opened {
    /// The primary on `primary`, its replicas on `replicas`, their lag measured from now on.
    pub fn replicated(
        primary: Pool,
        listen: &Pool,
        replicas: Vec<Pool>,
        max_lag: Duration,
    ) -> Self {
        let replicated = deckhand_postgres::replicated(primary, listen, replicas, max_lag);
        Self {
            primary: replicated.primary,
            replicas: Some(Replicas {
                repositories: replicated.replicas,
                status: replicated.status,
                max_lag,
            }),
        }
    }

    /// The services of every database, and the router that picks one for each read. Only the
    /// primary's deliver webhooks, so only they get the system's DNS.
    pub fn into_router(self, system: SystemPorts, settings: ServiceSettings) -> ReadRouter {
        let services = |repositories| Services::new(repositories, system.clone(), settings.clone());
        let primary = crate::webhooks::with_dns(services(self.primary));
        match self.replicas {
            None => ReadRouter::primary_only(primary),
            Some(replicas) => {
                // One instance, one count of held feed requests, whichever database reads.
                let replica_services = replicas
                    .repositories
                    .into_iter()
                    .map(|repositories| {
                        let mut replica = services(repositories);
                        replica.events = replica.events.sharing_waits_with(&primary.events);
                        replica
                    })
                    .collect();
                ReadRouter::new(primary, replica_services, replicas.status, replicas.max_lag)
            }
        }
    }
}

/// The configured store and replicas, for `deckhand serve`. Replicas need PostgreSQL: the
/// in-memory store has none, so the setting without `DATABASE_URL` stops the start.
pub async fn open_serving(
    settings: &StoreSettings,
    replicas: &ReplicaSettings,
    migrate: bool,
) -> anyhow::Result<Opened> {
    if replicas.urls.is_empty() {
        return Ok(Opened {
            primary: open(settings, migrate).await?,
            replicas: None,
        });
    }
    let Some(url) = &settings.database_url else {
        anyhow::bail!(
            "DATABASE_REPLICA_URL needs DATABASE_URL: the in-memory store has no replicas"
        );
    };
    let primary = connect_primary(settings, url, migrate).await?;
    let mut replica_pools = Vec::with_capacity(replicas.urls.len());
    for (index, replica) in replicas.urls.iter().enumerate() {
        refuse_a_different_statement_timeout(settings, replica)
            .await
            .with_context(|| format!("replica {} of DATABASE_REPLICA_URL", index + 1))?;
        let pool = connect(settings, replica).await.with_context(|| {
            format!(
                "connecting to replica {} of DATABASE_REPLICA_URL",
                index + 1
            )
        })?;
        replica_pools.push(pool);
    }
    let pool = primary.pool.clone();
    let mut opened = Opened::replicated(
        primary.pool,
        &primary.listen,
        replica_pools,
        replicas.max_lag(),
    );
    opened.primary = with_pooled_health(settings, &pool, opened.primary);
    Ok(opened)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replicas_without_postgres_stop_the_start() {
        let store = StoreSettings {
            database_url: None,
            db_pool_size: 4,
            db_statement_timeout_ms: 15_000,
            db_pooler: DbPooler::None,
            database_listen_url: None,
        };
        let replicas = ReplicaSettings {
            urls: vec!["postgres://replica/deckhand".to_owned()],
            max_lag_ms: 1000,
        };
        let Err(error) = open_serving(&store, &replicas, false).await else {
            panic!("replicas of the in-memory store were accepted")
        };
        assert_eq!(
            error.to_string(),
            "DATABASE_REPLICA_URL needs DATABASE_URL: the in-memory store has no replicas"
        );
    }
}
