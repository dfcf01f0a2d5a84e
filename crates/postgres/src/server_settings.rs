//! What the service expects of the PostgreSQL server's own settings. Through a
//! transaction-mode pooler the statement timeout cannot be set per session (a `SET` would stay
//! on whichever server session ran it), so it must be the server's, equal to
//! `DECKHAND_DB_STATEMENT_TIMEOUT_MS`: checked at start ([`check_statement_timeout`], a
//! difference stops `deckhand serve`) and by every readiness check afterwards
//! (`health::PgHealth`), since an operator can change it under a running service.

use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::StoreMisconfigured;
use diesel::QueryableByName;
use diesel::connection::CacheSize;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    setting: String,
}

/// The `statement_timeout` the session of `conn` runs with, in milliseconds as text (`0`: none).
pub(crate) async fn statement_timeout_ms(
    conn: &mut AsyncPgConnection,
) -> diesel::QueryResult<String> {
    let found: Setting =
        diesel::sql_query("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'")
            .get_result(conn)
            .await?;
    Ok(found.setting)
}

/// `found` (the server's value, in ms) against the `expected` timeout: the misconfiguration,
/// with both values and the fixes, when they differ.
pub(crate) fn compare(found: &str, expected: Duration) -> Result<(), StoreMisconfigured> {
    let expected = expected.as_millis();
    if found == expected.to_string() {
        return Ok(());
    }
    Err(StoreMisconfigured(format!(
        "through the connection pooler (DECKHAND_DB_POOLER=transaction) the server's \
         statement_timeout is {found} ms, not the {expected} ms of \
         DECKHAND_DB_STATEMENT_TIMEOUT_MS: set it where every server session gets it \
         (ALTER ROLE <user> SET statement_timeout = {expected}, or connect_query = 'SET \
         statement_timeout = {expected}' in pgbouncer.ini), or set \
         DECKHAND_DB_STATEMENT_TIMEOUT_MS={found} (docs/operations.md, \"Connection pooler\")"
    )))
}

/// Whether the server behind `database_url` (a transaction-mode pooler) runs statements with
/// `statement_timeout`: an error carrying [`StoreMisconfigured`] when it does not, another
/// error when it cannot be asked (the pooler or the server down), which should not stop a
/// start: the service reports that through readiness, as without a pooler.
pub async fn check_statement_timeout(
    database_url: &str,
    statement_timeout: Duration,
) -> anyhow::Result<()> {
    let mut conn = tokio::time::timeout(
        crate::POOL_TIMEOUT,
        AsyncPgConnection::establish(database_url),
    )
    .await
    .context("no connection within the pool timeout")?
    .context("connecting to read the server's statement_timeout")?;
    // Nothing named is left on a session a pooler shares.
    conn.set_prepared_statement_cache_size(CacheSize::Disabled);
    let found = statement_timeout_ms(&mut conn)
        .await
        .context("reading the server's statement_timeout")?;
    compare(&found, statement_timeout)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_different_timeout_names_both_values_and_the_fixes() {
        assert_eq!(compare("15000", Duration::from_secs(15)), Ok(()));
        let StoreMisconfigured(message) = compare("0", Duration::from_secs(15)).unwrap_err();
        assert!(
            message.contains("statement_timeout is 0 ms, not the 15000 ms"),
            "{message}"
        );
        assert!(
            message.contains("ALTER ROLE <user> SET statement_timeout = 15000"),
            "{message}"
        );
        assert!(
            message.contains("DECKHAND_DB_STATEMENT_TIMEOUT_MS=0"),
            "{message}"
        );
    }
}
