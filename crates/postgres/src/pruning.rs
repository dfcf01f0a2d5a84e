//! The store's prune jobs (`deckhand_domain::pruning`): one line per kind of record, a
//! `LIMIT`ed `DELETE` each. A batch picks its rows with `FOR UPDATE SKIP LOCKED`, so it never
//! waits on a row a request is writing, and two instances pruning at once take different rows.
//! Every condition is served by an index on the time it reads (migrations
//! `2026-11-26-000510_prune_indexes` and the tables' own).

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::ports::{Kept, PruneBatch, PruneJob};
use diesel::sql_types::{BigInt, Timestamptz};
use diesel_async::RunQueryDsl;
use time::OffsetDateTime;

use crate::error;
use crate::pool::{Pool, checkout};

/// Deletes up to `$2` rows of `table` that are `dead` (a condition on `$1`, the instant before
/// which records are dead).
struct LimitedDelete {
    pool: Pool,
    table: &'static str,
    dead: &'static str,
}

#[async_trait]
impl PruneBatch for LimitedDelete {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn prune_batch(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        let Self { table, dead, .. } = self;
        let mut conn = checkout(&self.pool).await?;
        let deleted = diesel::sql_query(format!(
            "DELETE FROM {table} WHERE ctid = ANY (ARRAY(
                 SELECT ctid FROM {table} WHERE {dead} LIMIT $2 FOR UPDATE SKIP LOCKED))"
        ))
        .bind::<Timestamptz, _>(before)
        .bind::<BigInt, _>(i64::from(limit))
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .with_context(|| format!("pruning {table}"))?;
        Ok(u64::try_from(deleted).unwrap_or(0))
    }
}

/// What the store prunes. To prune another table, add its line here (and the memory store's).
#[rustfmt::skip]
pub(crate) fn jobs(pool: &Pool) -> Vec<PruneJob> {
    let job = |name, kept, table, dead| {
        PruneJob::new(
            name,
            kept,
            LimitedDelete {
                pool: pool.clone(),
                table,
                dead,
            },
        )
    };
    vec![
        job("authorization codes", Kept::UntilExpiry, "oauth_authorization_codes", "expires_at <= $1"),
        job("sign-in sessions", Kept::UntilExpiry, "oauth_sessions", "expires_at <= $1"),
        job("expired access tokens", Kept::AfterExpiry, "oauth_access_tokens", "revoked_at IS NULL AND expires_at <= $1"),
        job("revoked access tokens", Kept::AfterRevocation, "oauth_access_tokens", "revoked_at <= $1"),
        job("expired refresh tokens", Kept::UntilExpiry, "oauth_refresh_tokens", "expires_at <= $1"),
        job("refresh tokens of revoked grants", Kept::AfterRevocation, "oauth_refresh_tokens",
            "grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at <= $1)"),
        // A grant's tokens are stored in the transaction that stores it, so one without any
        // lost them all to the jobs above; its codes go with it (ON DELETE CASCADE).
        job("grants without tokens", Kept::UntilExpiry, "oauth_grants",
            "created_at <= $1 \
             AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens t WHERE t.grant_id = oauth_grants.id) \
             AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens t WHERE t.grant_id = oauth_grants.id)"),
        job("DPoP proof ids", Kept::UntilExpiry, "dpop_proofs", "expires_at <= $1"),
        job("sign-in failures", Kept::SignInWindow, "sign_in_failures", "last_failure_at <= $1"),
        job("signature replays", Kept::UntilExpiry, "partner_signature_replays", "expires_at <= $1"),
        job("idempotency records", Kept::UntilExpiry, "idempotency_keys", "expires_at <= $1"),
        job("pageview dedupe", Kept::PageviewWindow, "deck_views", "counted_at <= $1"),
    ]
}
