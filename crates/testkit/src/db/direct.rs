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
