//! Names of test schemas, and the sweep of schemas that ended test processes left behind.
//!
//! Schema names carry their creation time (`test_<unix seconds>_<random>`), so the first test
//! of a process can drop the schemas of ended processes: those older than [`STALE_AFTER`] that no
//! connection uses (every connection of a test schema names it as its `application_name`).
//! A local cluster is reused from run to run, so without this they would pile up; they include
//! the few schemas each test process keeps for recycling (see [`super::recycle`]) when it ends.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, SimpleAsyncConnection as _};
use tokio::sync::OnceCell;

use super::database_url;

/// A test schema no connection uses and older than this is left over from an ended process.
const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// Advisory lock key serialising extension creation across test processes.
const EXTENSIONS_LOCK: i64 = 0x6465_636b_6861_6e64;

/// Extensions are per database, not per schema: they are created once per process, under a lock
/// shared with other test processes, before its tests migrate their schemas (whose `CREATE
/// EXTENSION IF NOT EXISTS` would otherwise race).
fn create_extensions() -> String {
    format!(
        "BEGIN; SELECT pg_advisory_xact_lock({EXTENSIONS_LOCK}); \
         CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public; COMMIT;"
    )
}

/// Creates the extensions and sweeps leftover schemas, once per test process, before its first
/// test schema. Best effort for the sweep; the extensions must exist.
pub(super) async fn prepare_server() -> anyhow::Result<()> {
    static PREPARED: OnceCell<()> = OnceCell::const_new();
    PREPARED
        .get_or_try_init(|| async {
            let mut admin = AsyncPgConnection::establish(database_url())
                .await
                // Not the URL itself, which may hold a password.
                .context("connecting to the test server")?;
            admin
                .batch_execute(&create_extensions())
                .await
                .context("creating extensions")?;
            sweep(&mut admin).await;
            anyhow::Ok(())
        })
        .await?;
    Ok(())
}

/// A fresh schema name: `test_<unix seconds>_<random>`.
pub(super) fn new_schema_name() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("test_{now}_{}", &random[..16])
}

#[derive(QueryableByName)]
struct Unused {
    #[diesel(sql_type = Text)]
    name: String,
}

/// Drops the test schemas of ended processes. Best effort: a failure only leaves them for later.
async fn sweep(admin: &mut AsyncPgConnection) {
    // Every connection of a test schema names it as its `application_name`.
    let unused: Vec<Unused> = match diesel_async::RunQueryDsl::load(
        diesel::sql_query(
            "SELECT nspname AS name FROM pg_namespace n WHERE nspname LIKE 'test\\_%' \
             AND NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.application_name = n.nspname)",
        ),
        admin,
    )
    .await
    {
        Ok(unused) => unused,
        Err(error) => {
            eprintln!("could not list leftover test schemas: {error:#}");
            return;
        }
    };
    let now = SystemTime::now();
    for Unused { name } in unused {
        if !is_stale(&name, now) {
            continue;
        }
        let drop = format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE");
        if let Err(error) = admin.batch_execute(&drop).await {
            eprintln!("could not drop leftover test schema {name}: {error:#}");
        }
    }
}

/// Whether a `test_` schema was made more than [`STALE_AFTER`] ago. Names without a time come
/// from before schema names carried one, so they are stale too.
fn is_stale(name: &str, now: SystemTime) -> bool {
    let Some(rest) = name.strip_prefix("test_") else {
        return false;
    };
    let made = rest
        .split_once('_')
        .and_then(|(seconds, _)| seconds.parse::<u64>().ok())
        .map(|seconds| UNIX_EPOCH + Duration::from_secs(seconds));
    match made {
        Some(made) => now.duration_since(made).is_ok_and(|age| age > STALE_AFTER),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_stale_an_hour_after_the_time_in_their_name() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert!(is_stale("test_996399_abcdef", now));
        assert!(!is_stale("test_996401_abcdef", now));
        // Made "later" than now (another machine's clock): not ours to judge.
        assert!(!is_stale("test_2000000_abcdef", now));
        // Names from before they carried a time.
        assert!(is_stale("test_0123456789abcdef0123456789abcdef", now));
        assert!(!is_stale("deckhand", now));
    }

    #[test]
    fn new_names_carry_the_time_and_are_not_stale() {
        let name = new_schema_name();
        assert!(name.starts_with("test_"), "{name}");
        assert!(!is_stale(&name, SystemTime::now()));
    }
}
