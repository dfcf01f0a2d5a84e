//! A connection of a test's own, outside any pool: to hold a lock the API must wait on, end a
//! backend under it, or read rows behind its back.

use anyhow::Context as _;
use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl as _};
use serde_json::Value;

/// A new connection to `url`.
///
/// # Panics
///
/// When the server cannot be reached: the test cannot go on.
pub async fn connect(url: &str) -> AsyncPgConnection {
    AsyncPgConnection::establish(url)
        .await
        .unwrap_or_else(|error| panic!("could not connect to the test server: {error}"))
}

#[derive(QueryableByName)]
struct JsonRow {
    #[diesel(sql_type = Text)]
    json: String,
}

/// The value of the one text column `json` of the one row `sql` selects, parsed: a test states
/// what it reads as `SELECT json_build_object(...)::text AS json` or `json_agg(...)`.
pub async fn select_json(conn: &mut AsyncPgConnection, sql: &str) -> anyhow::Result<Value> {
    let row: JsonRow = diesel::sql_query(sql)
        .get_result(conn)
        .await
        .with_context(|| format!("running {sql}"))?;
    serde_json::from_str(&row.json).context("the selected json column")
}

/// The server process id of `conn`'s session.
pub async fn backend_pid(conn: &mut AsyncPgConnection) -> i64 {
    let pid = select_json(conn, "SELECT pg_backend_pid()::text AS json")
        .await
        .unwrap_or_else(|error| panic!("{error:#}"));
    pid.as_i64().unwrap_or_else(|| panic!("a pid, not {pid}"))
}

/// The sessions that wait on a lock `holder` holds, once there is at least one.
///
/// # Panics
///
/// When none waits within `within`: what the test meant to catch in the middle never started.
pub async fn sessions_waiting_on(
    observer: &mut AsyncPgConnection,
    holder: i64,
    within: std::time::Duration,
) -> Vec<i64> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let waiting = select_json(
            observer,
            &format!(
                "SELECT coalesce(json_agg(pid), '[]')::text AS json FROM pg_stat_activity \
                 WHERE {holder} = ANY(pg_blocking_pids(pid))"
            ),
        )
        .await
        .unwrap_or_else(|error| panic!("{error:#}"));
        let waiting: Vec<i64> = waiting
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_i64)
            .collect();
        if !waiting.is_empty() {
            return waiting;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no session waited on {holder} within {within:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
