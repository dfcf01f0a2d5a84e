//! The moment a statement last found its session ended by the server, which the pool checks
//! its idle connections against: written where failed statements are told apart
//! (`error::query`), read where connections are handed out (`pool`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// When a statement last found its session ended by the server, as nanoseconds after
/// [`clock_start`] (0: never in this process). See [`seen`].
static SESSION_ENDED_AT: AtomicU64 = AtomicU64::new(0);

/// The instant the moments here count from; fixed before the first connection is made (a
/// pool calls it), so that every connection's moments come after it.
pub(crate) fn clock_start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

fn since_start(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(clock_start()).as_nanos()).unwrap_or(u64::MAX)
}

/// A statement found its session ended by the server (`error::query`: SQLSTATE 57P01
/// `admin_shutdown` from a fast shutdown or `pg_terminate_backend`, 57P02 `crash_shutdown`,
/// or the connection closed under it). Its connection goes back to the pool looking healthy:
/// the client notices the closed socket only when its connection task next reads it, which
/// may come after the next checkout, and a checkout costs no round trip
/// (`RecyclingMethod::Fast`). So from now on every idle connection last handed out before
/// this moment is checked with a round trip at its next checkout (`pool::verify_if_suspect`) and
/// dropped if its session is gone: the ended one is never handed out again, and after a
/// restart neither is any other connection the restart ended. Process-wide, as a restart
/// ends the sessions of every pool; a connection costs at most one `SELECT 1` per such event.
/// (57P03 `cannot_connect_now` comes only when a connection is made, never to a pooled one.)
pub(crate) fn seen() {
    SESSION_ENDED_AT.fetch_max(since_start(Instant::now()).max(1), Ordering::Relaxed);
}

/// Whether a session was seen ended after `at`: a connection last handed out then may be dead.
pub(crate) fn since(at: Instant) -> bool {
    let ended = SESSION_ENDED_AT.load(Ordering::Relaxed);
    ended != 0 && since_start(at) < ended
}
