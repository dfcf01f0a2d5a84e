//! Single-use records with an expiry (partner signatures, DPoP proof ids): one statement that
//! inserts a record unless a live one exists, so any number of instances racing on one value
//! settle on exactly one winner through the primary key.

use anyhow::Context as _;
use diesel::sql_types::{BigInt, Bool, Bytea, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

use crate::error;
use crate::pool::{Pool, checkout};

/// How many expired records each insert deletes: more than one, so a table shrinks back
/// after a burst, and few enough that the insert stays cheap.
const PRUNE_PER_INSERT: i64 = 8;

/// A table of single-use records keyed by `(owner text, hash bytea)`, with `expires_at`
/// indexed for the prune.
pub(crate) struct ReplayTable {
    pub(crate) name: &'static str,
    pub(crate) owner_column: &'static str,
    pub(crate) hash_column: &'static str,
}

#[derive(diesel::QueryableByName)]
struct Recorded {
    #[diesel(sql_type = Bool)]
    recorded: bool,
}

impl ReplayTable {
    /// True when `(owner, hash)` was not recorded yet, or only by a record expired at `now`
    /// (which is taken over); false for a replay.
    pub(crate) async fn record_once(
        &self,
        pool: &Pool,
        owner: &str,
        hash: &[u8; 32],
        now: OffsetDateTime,
        expires_at: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let ReplayTable {
            name,
            owner_column,
            hash_column,
        } = self;
        let mut conn = checkout(pool).await?;
        // One statement, so two instances racing on one value cannot both win: the primary
        // key decides. An expired record is taken over (DO UPDATE ... WHERE), and a few
        // expired rows of anyone are pruned on the way (served by the `expires_at` index);
        // SKIP LOCKED keeps concurrent inserts from waiting on each other's pruning.
        let rows: Vec<Recorded> = diesel::sql_query(format!(
            "WITH pruned AS (
                 DELETE FROM {name}
                 WHERE ctid = ANY (ARRAY(
                     SELECT ctid FROM {name}
                     WHERE expires_at <= $3
                     LIMIT $5
                     FOR UPDATE SKIP LOCKED))
             )
             INSERT INTO {name} ({owner_column}, {hash_column}, expires_at)
             VALUES ($1, $2, $4)
             ON CONFLICT ({owner_column}, {hash_column}) DO UPDATE
                 SET expires_at = EXCLUDED.expires_at
                 WHERE {name}.expires_at <= $3
             RETURNING true AS recorded"
        ))
        .bind::<Text, _>(owner)
        .bind::<Bytea, _>(hash.as_slice())
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(expires_at)
        .bind::<BigInt, _>(PRUNE_PER_INSERT)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .with_context(|| format!("recording a single-use value in {name}"))?;
        Ok(rows.iter().any(|row| row.recorded))
    }
}
