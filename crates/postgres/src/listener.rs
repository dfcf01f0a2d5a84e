//! One connection per set of repositories LISTENs for every copy they hold in process, so that
//! every instance drops a copy when a change to its tables commits. Whenever the connection is
//! down (at start, after PostgreSQL restarts) every copy is told so, and serves nothing: a
//! missed notification can never leave a stale copy in use.
//!
//! One connection, not one per channel: PostgreSQL wakes every backend that listens in the
//! database at each commit that notifies, whatever its channels (`SignalBackends`), so each
//! listening connection costs every write a signal and a wake-up of its backend
//! (docs/benchmarks.md, "One listening connection").

use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use anyhow::Context as _;
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt as _;
use tokio::sync::Notify;

use crate::error;
use crate::pool::{Pool, checkout};

/// How long the listener waits before connecting again after losing its connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// A copy of some tables, held in process and kept fresh by the [`Listener`].
pub(crate) trait Invalidate: Send + Sync + 'static {
    /// Drops every copy; `listening` says whether copies made from now on can be trusted.
    fn invalidate(&self, listening: bool);

    /// A notification with `payload` arrived on the copy's channel: by default, drop every copy.
    fn notified(&self, _payload: &str) {
        self.invalidate(true);
    }

    /// The copy's channel is listened on by a connection in `schema` (its `current_schema()`,
    /// where the tables this copy keeps live): told before any notification is passed on.
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

/// The listening connection of one set of repositories, shared by every copy they hold. The
/// connection is taken from its pool at the first subscription and kept (out of the pool) for
/// as long as any clone of this lives.
#[derive(Clone)]
pub(crate) struct Listener {
    hub: Arc<Hub>,
}

struct Hub {
    pool: Pool,
    subscribers: Mutex<Vec<Subscriber>>,
    /// Wakes the connection's task: a new subscriber to LISTEN for, or the hub gone.
    wake: Arc<Notify>,
    started: OnceLock<()>,
}

struct Subscriber {
    channel: &'static str,
    copy: Weak<dyn Invalidate>,
    /// Whether the copy was told that the current connection listens on its channel; only then
    /// are notifications passed on to it.
    told: bool,
}

impl Listener {
    /// A listener taking its connection from `pool` when first subscribed to.
    pub(crate) fn new(pool: Pool) -> Self {
        Self {
            hub: Arc::new(Hub {
                pool,
                subscribers: Mutex::new(Vec::new()),
                wake: Arc::new(Notify::new()),
                started: OnceLock::new(),
            }),
        }
    }

    /// Passes the notifications of `channel` to `copy` for as long as it lives; until the
    /// connection listens on `channel`, and whenever it is lost, `copy` is invalidated as not
    /// listening. Needs a Tokio runtime: the connection runs in a task of its own.
    pub(crate) fn subscribe(&self, channel: &'static str, copy: Weak<dyn Invalidate>) {
        lock_state(&self.hub.subscribers).push(Subscriber {
            channel,
            copy,
            told: false,
        });
        self.hub.started.get_or_init(|| {
            tokio::spawn(run(
                Arc::downgrade(&self.hub),
                self.hub.wake.clone(),
                self.hub.pool.clone(),
            ));
        });
        self.hub.wake.notify_one();
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        // The task holds the hub weakly: woken, it finds it gone and ends, closing the connection.
        self.wake.notify_one();
    }
}

impl Hub {
    /// The channels of the live subscribers that `listening` lacks; the dead are dropped.
    fn channels_missing_from(&self, listening: &[&'static str]) -> Vec<&'static str> {
        let mut subscribers = lock_state(&self.subscribers);
        subscribers.retain(|subscriber| subscriber.copy.strong_count() > 0);
        let mut missing: Vec<&'static str> = Vec::new();
        for subscriber in subscribers.iter() {
            if !listening.contains(&subscriber.channel) && !missing.contains(&subscriber.channel) {
                missing.push(subscriber.channel);
            }
        }
        missing
    }

    /// Tells each copy not yet told whose channel is in `listening` that it is listened on.
    fn tell_listening(&self, listening: &[&'static str], schema: &str) {
        let newly = self.copies_where(|subscriber| {
            let tell = !subscriber.told && listening.contains(&subscriber.channel);
            subscriber.told |= tell;
            tell
        });
        for copy in newly {
            copy.listening_in(schema);
            // From here on every change is heard; anything copied before may be stale.
            copy.invalidate(true);
        }
    }

    /// Passes a notification on to the told copies of its channel.
    fn pass_on(&self, channel: &str, payload: &str) {
        for copy in self.copies_where(|subscriber| subscriber.told && subscriber.channel == channel)
        {
            copy.notified(payload);
        }
    }

    /// The connection is lost: every copy is told it is not listened for.
    fn lost(&self) {
        for copy in self.copies_where(|subscriber| {
            subscriber.told = false;
            true
        }) {
            copy.invalidate(false);
        }
    }

    /// The live copies of the subscribers `pick` chooses (it may update them), taken out of the
    /// lock so that a copy's own work never runs under it.
    fn copies_where(
        &self,
        mut pick: impl FnMut(&mut Subscriber) -> bool,
    ) -> Vec<Arc<dyn Invalidate>> {
        lock_state(&self.subscribers)
            .iter_mut()
            .filter_map(|subscriber| pick(subscriber).then(|| subscriber.copy.upgrade())?)
            .collect()
    }
}

/// Keeps a listening connection for as long as the hub lives, reconnecting after failures.
async fn run(hub: Weak<Hub>, wake: Arc<Notify>, pool: Pool) {
    loop {
        let outcome = listen_once(&hub, &wake, &pool).await;
        let Some(live) = hub.upgrade() else { return };
        live.lost();
        drop(live);
        if let Err(error) = outcome {
            tracing::warn!(error = %format!("{error:#}"), "change listener lost; what it keeps fresh is read from the database until it reconnects");
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

/// One listening connection, until it fails or the hub is gone.
async fn listen_once(hub: &Weak<Hub>, wake: &Notify, pool: &Pool) -> anyhow::Result<()> {
    // Taken out of the pool for good: it stays busy listening.
    let mut conn: AsyncPgConnection = Object::take(checkout(pool).await?);
    let schema: SchemaRow = diesel::sql_query("SELECT current_schema() AS schema")
        .get_result(&mut conn)
        .await
        .map_err(error::query)
        .context("reading the listener's schema")?;
    let mut listening: Vec<&'static str> = Vec::new();
    loop {
        let Some(live) = hub.upgrade() else {
            return Ok(());
        };
        let missing = live.channels_missing_from(&listening);
        drop(live);
        for channel in missing {
            diesel::sql_query(format!("LISTEN {channel}"))
                .execute(&mut conn)
                .await
                .map_err(error::query)
                .with_context(|| format!("listening on {channel}"))?;
            listening.push(channel);
        }
        match hub.upgrade() {
            Some(live) => live.tell_listening(&listening, &schema.schema),
            None => return Ok(()),
        }
        let next = {
            let mut notifications = pin!(conn.notifications_stream());
            tokio::select! {
                next = notifications.next() => next,
                () = wake.notified() => continue,
            }
        };
        let Some(notification) = next else {
            return Ok(());
        };
        let notification = notification
            .map_err(error::query)
            .context("receiving changes")?;
        match hub.upgrade() {
            Some(live) => live.pass_on(&notification.channel, &notification.payload),
            None => return Ok(()),
        }
    }
}
