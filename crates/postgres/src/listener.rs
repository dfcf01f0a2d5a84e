//! One connection per copy held in process, LISTENing on the channel its tables' triggers
//! notify, so that every instance drops its copy when a change commits. Whenever the connection
//! is down (at start, after PostgreSQL restarts) the copy is told so, and serves nothing: a
//! missed notification can never leave a stale copy in use.

use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use anyhow::Context as _;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt as _;

use crate::error;
use crate::pool::{Pool, checkout};

/// How long the listener waits before connecting again after losing its connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// A copy of some tables, held in process and kept fresh by a listener.
pub(crate) trait Invalidate: Send + Sync + 'static {
    /// Drops every copy; `listening` says whether copies made from now on can be trusted.
    fn invalidate(&self, listening: bool);

    /// A notification with `payload` arrived: by default, drop every copy.
    fn notified(&self, _payload: &str) {
        self.invalidate(true);
    }

    /// Whether this copy is told the schema its listener connected in ([`Self::listening_in`]);
    /// a round trip more at each connection, so only for copies whose notifications name it.
    fn wants_schema(&self) -> bool {
        false
    }

    /// The listening connection is up, in `schema` (its `current_schema()`, where the tables
    /// this copy keeps live), before any notification is passed on.
    fn listening_in(&self, _schema: &str) {}
}

#[derive(diesel::QueryableByName)]
struct SchemaRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    schema: String,
}

/// The state of a copy (its generation, whether it is listening, what it holds), locked. The
/// state is consistent between statements, so a lock poisoned by a panic elsewhere is usable.
pub(crate) fn lock_state<S>(state: &Mutex<S>) -> MutexGuard<'_, S> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Listens on `channel` for `copy` for as long as it lives, reconnecting after failures.
pub(crate) fn spawn<T: Invalidate>(channel: &'static str, copy: Weak<T>, pool: Pool) {
    tokio::spawn(listen(channel, copy, pool));
}

async fn listen<T: Invalidate>(channel: &'static str, copy: Weak<T>, pool: Pool) {
    loop {
        let outcome = listen_once(channel, &copy, &pool).await;
        let Some(live) = copy.upgrade() else { return };
        live.invalidate(false);
        drop(live);
        if let Err(error) = outcome {
            tracing::warn!(error = %format!("{error:#}"), channel, "change listener lost; what it keeps fresh is read from the database until it reconnects");
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

/// One listening connection, until it fails or the copy is gone.
async fn listen_once<T: Invalidate>(
    channel: &'static str,
    copy: &Weak<T>,
    pool: &Pool,
) -> anyhow::Result<()> {
    // Taken out of the pool for good: it stays busy listening.
    let mut conn: AsyncPgConnection = Object::take(checkout(pool).await?);
    diesel::sql_query(format!("LISTEN {channel}"))
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .with_context(|| format!("listening on {channel}"))?;
    let Some(live) = copy.upgrade() else {
        return Ok(());
    };
    if live.wants_schema() {
        let schema: SchemaRow = diesel::sql_query("SELECT current_schema() AS schema")
            .get_result(&mut conn)
            .await
            .map_err(error::query)
            .context("reading the listener's schema")?;
        live.listening_in(&schema.schema);
    }
    // From here on every change is heard; anything copied before may be stale.
    live.invalidate(true);
    drop(live);
    let mut notifications = pin!(conn.notifications_stream());
    while let Some(notification) = notifications.next().await {
        let notification = notification
            .map_err(error::query)
            .with_context(|| format!("receiving changes on {channel}"))?;
        match copy.upgrade() {
            Some(live) => live.notified(&notification.payload),
            None => return Ok(()),
        }
    }
    Ok(())
}
