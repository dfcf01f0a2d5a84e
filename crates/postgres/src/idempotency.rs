//! Idempotency keys over PostgreSQL: the table's primary key (caller, key) decides which of
//! racing first requests claims a key, whichever instance they reached.

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::idempotency::ports::{
    ClaimRequest, Claimed, IdempotencyRepository, KeyClaim, KeyRecord,
};
use deckhand_domain::idempotency::{Fingerprint, StoredResponse};
use diesel::sql_types::{Bool, Bytea, Int2, Nullable, Text};
use diesel::{OptionalExtension as _, QueryableByName};
use diesel_async::RunQueryDsl;

use crate::error;
use crate::pool::{Pool, checkout};
use crate::statement::{Bind, Statement};

/// How many expired keys of anyone each claim deletes (index-served by
/// `idempotency_keys_by_expiry`): more than one, so the table shrinks back after a burst, and
/// few enough that the claim stays cheap.
const PRUNE_PER_CLAIM: i64 = 8;

/// How often a claim is tried when the record it met was released before it could be read.
const CLAIM_ATTEMPTS: usize = 3;

/// Inserts the claim, or takes over a record that no longer holds the key (expired, or
/// unfinished and abandoned), in one statement; prunes a few expired records of other keys
/// on the way (SKIP LOCKED: concurrent claims never wait on each other's pruning).
const CLAIM: &str = "
WITH pruned AS (
    DELETE FROM idempotency_keys
    WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM idempotency_keys
        WHERE expires_at <= $5 AND NOT (caller = $1 AND key = $2)
        LIMIT $8
        FOR UPDATE SKIP LOCKED))
)
INSERT INTO idempotency_keys AS k (caller, key, fingerprint, claim_id, claimed_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (caller, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, claim_id = EXCLUDED.claim_id,
        claimed_at = EXCLUDED.claimed_at, expires_at = EXCLUDED.expires_at,
        response_status = NULL, response_headers = NULL, response_body = NULL
    WHERE k.expires_at <= $5 OR (k.response_status IS NULL AND k.claimed_at <= $7)
RETURNING true AS claimed";

const HELD: &str = "
SELECT fingerprint, response_status, response_headers::text AS response_headers, response_body
FROM idempotency_keys WHERE caller = $1 AND key = $2";

const COMPLETE: &str = "
UPDATE idempotency_keys
SET response_status = $4::smallint, response_headers = $5::jsonb, response_body = $6
WHERE caller = $1 AND key = $2 AND claim_id = $3";

const RELEASE: &str = "
DELETE FROM idempotency_keys
WHERE caller = $1 AND key = $2 AND claim_id = $3 AND response_status IS NULL";

#[derive(QueryableByName)]
struct ClaimedRow {
    #[diesel(sql_type = Bool)]
    #[allow(dead_code, reason = "a returned row is the answer")]
    claimed: bool,
}

#[derive(QueryableByName)]
struct HeldRow {
    #[diesel(sql_type = Bytea)]
    fingerprint: Vec<u8>,
    #[diesel(sql_type = Nullable<Int2>)]
    response_status: Option<i16>,
    #[diesel(sql_type = Nullable<Text>)]
    response_headers: Option<String>,
    #[diesel(sql_type = Nullable<Bytea>)]
    response_body: Option<Vec<u8>>,
}

impl HeldRow {
    fn into_record(self) -> anyhow::Result<KeyRecord> {
        let fingerprint = Fingerprint(
            self.fingerprint
                .try_into()
                .map_err(|_| anyhow::anyhow!("a stored fingerprint is not 32 bytes"))?,
        );
        let response = match (
            self.response_status,
            self.response_headers,
            self.response_body,
        ) {
            (Some(status), Some(headers), Some(body)) => Some(StoredResponse {
                status: u16::try_from(status).context("a stored status is negative")?,
                headers: serde_json::from_str(&headers).context("reading stored headers")?,
                body,
            }),
            _ => None,
        };
        Ok(KeyRecord {
            fingerprint,
            response,
        })
    }
}

fn key_binds(claim: &KeyClaim) -> Vec<Bind> {
    vec![
        Bind::Text(claim.caller.clone()),
        Bind::Text(claim.key.as_str().to_owned()),
        Bind::Uuid(claim.claim_id),
    ]
}

pub(crate) struct PgIdempotencyKeys {
    pub(crate) pool: Pool,
}

#[async_trait]
impl IdempotencyRepository for PgIdempotencyKeys {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn claim(&self, request: &ClaimRequest) -> anyhow::Result<Claimed> {
        let mut conn = checkout(&self.pool).await?;
        let claim = &request.claim;
        for _ in 0..CLAIM_ATTEMPTS {
            let claimed: Vec<ClaimedRow> = Statement::new(
                CLAIM,
                vec![
                    Bind::Text(claim.caller.clone()),
                    Bind::Text(claim.key.as_str().to_owned()),
                    Bind::Bytes(request.fingerprint.0.to_vec()),
                    Bind::Uuid(claim.claim_id),
                    Bind::Time(request.now),
                    Bind::Time(request.expires_at),
                    Bind::Time(request.abandoned_before),
                    Bind::Int(PRUNE_PER_CLAIM),
                ],
            )
            .load(&mut conn)
            .await
            .map_err(error::query)
            .context("claiming an idempotency key")?;
            if !claimed.is_empty() {
                return Ok(Claimed::Claimed);
            }
            let held: Option<HeldRow> = Statement::new(
                HELD,
                vec![
                    Bind::Text(claim.caller.clone()),
                    Bind::Text(claim.key.as_str().to_owned()),
                ],
            )
            .get_result(&mut conn)
            .await
            .optional()
            .map_err(error::query)
            .context("reading an idempotency key")?;
            // None: released by its failed first request in between; claim again.
            if let Some(held) = held {
                return Ok(Claimed::Held(held.into_record()?));
            }
        }
        anyhow::bail!("an idempotency key kept changing hands")
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn complete(&self, claim: &KeyClaim, response: &StoredResponse) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        let mut binds = key_binds(claim);
        binds.extend([
            Bind::Int(i64::from(response.status)),
            Bind::Text(serde_json::to_string(&response.headers)?),
            Bind::Bytes(response.body.clone()),
        ]);
        Statement::new(COMPLETE, binds)
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("storing an idempotent response")?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn release(&self, claim: &KeyClaim) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        Statement::new(RELEASE, key_binds(claim))
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("releasing an idempotency key")?;
        Ok(())
    }
}
