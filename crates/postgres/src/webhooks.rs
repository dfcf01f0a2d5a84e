//! Webhook endpoints, the delivery queue and the dispatch watermark over PostgreSQL
//! (migration `2026-11-26-000400_webhooks`).
//!
//! Which endpoint wants which event, and what an attempt makes of a delivery, are the domain's
//! (`webhooks::fan_out`, `AttemptRecord::decide`); this adapter keeps the queue so that any
//! number of instances share it: the watermark row is taken with `FOR UPDATE SKIP LOCKED` (one
//! dispatcher at a time, the others go on), and deliveries are claimed the same way with a
//! lease, so no two instances attempt one delivery and a dead instance's claim runs out.

use std::sync::{Arc, Weak};
use std::time::Duration;

use anyhow::Context as _;
use async_trait::async_trait;
use deckhand_domain::events::{Event, EventType};
use deckhand_domain::identity::{GameScopes, UserId};
use deckhand_domain::webhooks::ports::{
    ClaimedDelivery, CreateEndpointError, QueueStats, WebhookOwner, WebhookRepository,
};
use deckhand_domain::webhooks::{
    AttemptRecord, Delivery, DeliveryId, DeliveryStatus, DisabledReason, Endpoint, EndpointChanges,
    EndpointHealth, GameSelection, MAX_ENDPOINTS_PER_PARTNER, MAX_IN_FLIGHT_PER_ENDPOINT,
    ONE_MORE_ATTEMPT, TypeSelection, WebhookId, fan_out,
};
use diesel::QueryableByName;
use diesel::sql_types::{
    Array, BigInt, Bool, Bytea, Integer, Nullable, Text, Timestamptz, Uuid as SqlUuid,
};
use diesel_async::{AsyncConnection as _, AsyncPgConnection, RunQueryDsl};
use time::OffsetDateTime;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::error;
use crate::events::read_events_after;
use crate::listener::{Invalidate, Listener};
use crate::pool::{Pool, checkout};
use crate::scopes::stored_scopes;

/// The channels that mean "there may be work": new events, and deliveries queued or made due
/// by any instance (the trigger of `webhook_deliveries`).
const CHANNELS: [&str; 2] = ["deckhand_events", "deckhand_webhooks"];

pub(crate) struct PgWebhookRepository {
    pool: Pool,
    wake: Arc<Wake>,
}

/// Wakes the worker of this instance when a listener hears news.
struct Wake(Notify);

impl Invalidate for Wake {
    fn invalidate(&self, _listening: bool) {
        // Also when the listener (re)connects: anything may have happened while it was down.
        self.0.notify_one();
    }
}

impl PgWebhookRepository {
    pub(crate) fn new(pool: Pool, listen: &Listener) -> Self {
        let wake = Arc::new(Wake(Notify::new()));
        if tokio::runtime::Handle::try_current().is_ok() {
            for channel in CHANNELS {
                listen.subscribe(channel, Arc::downgrade(&wake) as Weak<Wake>);
            }
        }
        Self { pool, wake }
    }
}

const ENDPOINT_COLUMNS: &str = "e.id, e.partner_slug, e.url, e.types, e.games, e.description, \
     e.enabled, e.disabled_reason, e.consecutive_failures, e.secret_sealed, \
     e.previous_secret_sealed, e.previous_secret_until, e.created_at";

const DELIVERY_COLUMNS: &str = "d.id AS delivery_id, d.endpoint_id, d.event_id, d.event_type, \
     d.sequence, d.game, d.subject_id, d.body, d.attempt, d.retries_used, d.status, \
     d.response_status, d.duration_ms, d.error, d.attempted_at, d.next_attempt_at, \
     d.created_at AS delivery_created_at";

#[derive(QueryableByName)]
struct EndpointRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    partner_slug: String,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = Array<Text>)]
    types: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    games: Vec<String>,
    #[diesel(sql_type = Nullable<Text>)]
    description: Option<String>,
    #[diesel(sql_type = Bool)]
    enabled: bool,
    #[diesel(sql_type = Nullable<Text>)]
    disabled_reason: Option<String>,
    #[diesel(sql_type = Integer)]
    consecutive_failures: i32,
    #[diesel(sql_type = Bytea)]
    secret_sealed: Vec<u8>,
    #[diesel(sql_type = Nullable<Bytea>)]
    previous_secret_sealed: Option<Vec<u8>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    previous_secret_until: Option<OffsetDateTime>,
    #[diesel(sql_type = Timestamptz)]
    created_at: OffsetDateTime,
}

impl EndpointRow {
    fn into_domain(self) -> anyhow::Result<Endpoint> {
        let types = TypeSelection::parse(&self.types)
            .with_context(|| format!("webhook {} has invalid stored types", self.id))?;
        let games = GameScopes::parse_list(&self.games.join(" "))
            .with_context(|| format!("webhook {} has invalid stored games", self.id))?;
        Ok(Endpoint {
            id: WebhookId(self.id),
            partner: self.partner_slug,
            url: self.url,
            types,
            games: GameSelection(games),
            description: self.description,
            enabled: self.enabled,
            disabled_reason: self
                .disabled_reason
                .as_deref()
                .and_then(DisabledReason::parse),
            consecutive_failures: self.consecutive_failures,
            sealed_secret: self.secret_sealed,
            previous_secret: self.previous_secret_sealed.zip(self.previous_secret_until),
            created_at: self.created_at,
        })
    }
}

#[derive(QueryableByName)]
struct EndpointIdRow {
    #[diesel(sql_type = SqlUuid)]
    endpoint_id: Uuid,
}

/// An endpoint's columns that attempts change ([`EndpointHealth`]).
#[derive(QueryableByName)]
struct HealthRow {
    #[diesel(sql_type = Bool)]
    enabled: bool,
    #[diesel(sql_type = Nullable<Text>)]
    disabled_reason: Option<String>,
    #[diesel(sql_type = Integer)]
    consecutive_failures: i32,
}

impl HealthRow {
    fn into_domain(self) -> EndpointHealth {
        EndpointHealth {
            enabled: self.enabled,
            disabled_reason: self
                .disabled_reason
                .as_deref()
                .and_then(DisabledReason::parse),
            consecutive_failures: self.consecutive_failures,
        }
    }
}

#[derive(QueryableByName)]
struct DeliveryRow {
    #[diesel(sql_type = SqlUuid)]
    delivery_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    endpoint_id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    event_id: Uuid,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    sequence: Option<i64>,
    #[diesel(sql_type = Text)]
    game: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    subject_id: Option<Uuid>,
    #[diesel(sql_type = Text)]
    body: String,
    #[diesel(sql_type = Integer)]
    attempt: i32,
    #[diesel(sql_type = Integer)]
    retries_used: i32,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Nullable<Integer>)]
    response_status: Option<i32>,
    #[diesel(sql_type = Nullable<BigInt>)]
    duration_ms: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    error: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    attempted_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    next_attempt_at: Option<OffsetDateTime>,
    #[diesel(sql_type = Timestamptz)]
    delivery_created_at: OffsetDateTime,
}

impl DeliveryRow {
    fn into_domain(self) -> anyhow::Result<Delivery> {
        let event_type = EventType::parse(&self.event_type).with_context(|| {
            format!(
                "delivery {} has an unknown stored event type",
                self.delivery_id
            )
        })?;
        let status = DeliveryStatus::parse(&self.status).with_context(|| {
            format!("delivery {} has an unknown stored status", self.delivery_id)
        })?;
        Ok(Delivery {
            id: DeliveryId(self.delivery_id),
            endpoint: WebhookId(self.endpoint_id),
            event_id: deckhand_domain::events::EventId(self.event_id),
            event_type,
            sequence: self.sequence,
            game: self.game,
            subject_id: self.subject_id,
            body: self.body,
            attempt: self.attempt,
            retries_used: self.retries_used,
            status,
            response_status: self.response_status,
            duration_ms: self.duration_ms,
            error: self.error,
            attempted_at: self.attempted_at,
            next_attempt_at: self.next_attempt_at,
            created_at: self.delivery_created_at,
        })
    }
}

#[derive(QueryableByName)]
struct OwnerRow {
    #[diesel(sql_type = SqlUuid)]
    owner_created_by: Uuid,
    #[diesel(sql_type = Array<Text>)]
    owner_scopes: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    owner_game_scopes: Vec<String>,
    #[diesel(sql_type = Bool)]
    owner_active: bool,
}

#[derive(QueryableByName)]
struct ClaimRow {
    #[diesel(embed)]
    delivery: DeliveryRow,
    #[diesel(embed)]
    endpoint: EndpointRow,
    #[diesel(embed)]
    owner: OwnerRow,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

#[derive(QueryableByName)]
struct Watermark {
    #[diesel(sql_type = BigInt)]
    last_sequence: i64,
}

#[derive(QueryableByName)]
struct Due {
    #[diesel(sql_type = Nullable<Timestamptz>)]
    due: Option<OffsetDateTime>,
}

#[derive(QueryableByName)]
struct Stats {
    #[diesel(sql_type = BigInt)]
    pending: i64,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    oldest: Option<OffsetDateTime>,
}

fn endpoints(rows: Vec<EndpointRow>) -> anyhow::Result<Vec<Endpoint>> {
    rows.into_iter().map(EndpointRow::into_domain).collect()
}

/// Pending deliveries the worker may take: those of enabled endpoints, and pings (a partner
/// pings a disabled endpoint to see whether it is back) unless an operator disabled it.
const CLAIMABLE: &str = "d.status = 'pending' AND (e.enabled OR (d.event_type = 'webhook.ping' \
     AND e.disabled_reason IS DISTINCT FROM 'operator'))";

/// An endpoint `e` whose deliveries may be claimable: enabled, or disabled but not by an
/// operator (its pings).
const ENDPOINT_CLAIMABLE: &str = "(e.enabled OR e.disabled_reason IS DISTINCT FROM 'operator')";

/// How many deliveries of endpoint `e` are in flight at `$1` (leased; a recorded attempt ends
/// its lease). Served by `webhook_deliveries_leased`.
const IN_FLIGHT: &str =
    "SELECT count(*) FROM webhook_deliveries l WHERE l.endpoint_id = e.id AND l.lease_until > $1";

/// At most `limit` claimable pending deliveries of endpoint `e` (`id`, `next_attempt_at`) that
/// also match `condition` on `d`, oldest due first: every one of an enabled endpoint, the pings
/// of one disabled but not by an operator ([`CLAIMABLE`] per endpoint). One branch runs, each
/// read from the front of its index (`webhook_deliveries_endpoint_due`, `_pending_pings`), so
/// an endpoint with a long queue costs no more than one with a short one.
fn pending_of_endpoint(condition: &str, limit: usize) -> String {
    format!(
        "(SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
          WHERE e.enabled AND d.endpoint_id = e.id AND d.status = 'pending' AND {condition}
          ORDER BY d.next_attempt_at, d.id LIMIT {limit})
         UNION ALL
         (SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
          WHERE NOT e.enabled AND e.disabled_reason IS DISTINCT FROM 'operator'
              AND d.endpoint_id = e.id AND d.status = 'pending'
              AND d.event_type = 'webhook.ping' AND {condition}
          ORDER BY d.next_attempt_at, d.id LIMIT {limit})"
    )
}

/// At most `limit` deliveries of endpoint `e` a claim at `$1` may take, oldest due first: due,
/// and not in flight (never leased, or a lease that ran out).
fn claimable_due(limit: usize) -> String {
    pending_of_endpoint(
        "d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)",
        limit,
    )
}

async fn find_endpoint(
    conn: &mut AsyncPgConnection,
    partner: &str,
    id: WebhookId,
) -> anyhow::Result<Option<Endpoint>> {
    let rows: Vec<EndpointRow> = diesel::sql_query(format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints e WHERE e.partner_slug = $1 AND e.id = $2"
    ))
    .bind::<Text, _>(partner)
    .bind::<SqlUuid, _>(id.0)
    .load(conn)
    .await
    .map_err(error::query)
    .context("reading a webhook endpoint")?;
    Ok(endpoints(rows)?.pop())
}

async fn insert_deliveries(
    conn: &mut AsyncPgConnection,
    deliveries: &[Delivery],
) -> anyhow::Result<()> {
    if deliveries.is_empty() {
        return Ok(());
    }
    let column = |f: fn(&Delivery) -> Uuid| deliveries.iter().map(f).collect::<Vec<_>>();
    diesel::sql_query(
        "INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, sequence, game,
             subject_id, body, status, next_attempt_at, created_at)
         SELECT id, endpoint_id, event_id, event_type, sequence, game, subject_id, body,
             'pending', $9, $9
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bigint[], $6::text[],
             $7::uuid[], $8::text[])
             AS t (id, endpoint_id, event_id, event_type, sequence, game, subject_id, body)
         ON CONFLICT (endpoint_id, event_id) DO NOTHING",
    )
    .bind::<Array<SqlUuid>, _>(column(|d| d.id.0))
    .bind::<Array<SqlUuid>, _>(column(|d| d.endpoint.0))
    .bind::<Array<SqlUuid>, _>(column(|d| d.event_id.0))
    .bind::<Array<Text>, _>(
        deliveries
            .iter()
            .map(|d| d.event_type.as_str().to_owned())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Nullable<BigInt>>, _>(deliveries.iter().map(|d| d.sequence).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(
        deliveries
            .iter()
            .map(|d| d.game.clone())
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Nullable<SqlUuid>>, _>(
        deliveries.iter().map(|d| d.subject_id).collect::<Vec<_>>(),
    )
    .bind::<Array<Text>, _>(
        deliveries
            .iter()
            .map(|d| d.body.clone())
            .collect::<Vec<_>>(),
    )
    .bind::<Timestamptz, _>(
        deliveries
            .iter()
            .map(|d| d.created_at)
            .min()
            .unwrap_or(OffsetDateTime::UNIX_EPOCH),
    )
    .execute(conn)
    .await
    .map_err(error::query)
    .context("queueing webhook deliveries")?;
    Ok(())
}

#[async_trait]
impl WebhookRepository for PgWebhookRepository {
    #[tracing::instrument(level = "debug", skip_all)]
    async fn create(&self, endpoint: &Endpoint) -> Result<(), CreateEndpointError> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let created = conn
            .transaction::<_, anyhow::Error, _>(async |conn| {
                // The partner's row lock makes the count and the insert one decision against
                // concurrent creates. The count is a statement of its own: in READ COMMITTED
                // it then sees every create committed while this one waited for the lock.
                diesel::sql_query("SELECT 1 FROM partners WHERE slug = $1 FOR UPDATE")
                    .bind::<Text, _>(&endpoint.partner)
                    .execute(conn)
                    .await
                    .map_err(error::query)
                    .context("locking the partner of a webhook endpoint")?;
                let counted: Vec<Count> = diesel::sql_query(
                    "SELECT count(*) AS count FROM webhook_endpoints WHERE partner_slug = $1",
                )
                .bind::<Text, _>(&endpoint.partner)
                .load(conn)
                .await
                .map_err(error::query)
                .context("counting a partner's webhook endpoints")?;
                let count = counted.into_iter().next().map_or(0, |row| row.count);
                if count >= MAX_ENDPOINTS_PER_PARTNER as i64 {
                    return Ok(false);
                }
                diesel::sql_query(
                    "INSERT INTO webhook_endpoints (id, partner_slug, url, types, games,
                         description, enabled, secret_sealed, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $9, $7, $8)",
                )
                .bind::<SqlUuid, _>(endpoint.id.0)
                .bind::<Text, _>(&endpoint.partner)
                .bind::<Text, _>(&endpoint.url)
                .bind::<Array<Text>, _>(endpoint.types.names())
                .bind::<Array<Text>, _>(endpoint.games.names())
                .bind::<Nullable<Text>, _>(endpoint.description.as_deref())
                .bind::<Bytea, _>(&endpoint.sealed_secret)
                .bind::<Timestamptz, _>(endpoint.created_at)
                .bind::<Bool, _>(endpoint.enabled)
                .execute(conn)
                .await
                .map_err(error::query)
                .context("storing a webhook endpoint")?;
                Ok(true)
            })
            .await?;
        if created {
            Ok(())
        } else {
            Err(CreateEndpointError::TooMany)
        }
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list(&self, partner: &str) -> anyhow::Result<Vec<Endpoint>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints e WHERE e.partner_slug = $1
             ORDER BY e.created_at, e.id"
        ))
        .bind::<Text, _>(partner)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("listing webhook endpoints")?;
        endpoints(rows)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn find(&self, partner: &str, id: WebhookId) -> anyhow::Result<Option<Endpoint>> {
        let mut conn = checkout(&self.pool).await?;
        find_endpoint(&mut conn, partner, id).await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn list_all(&self, partner: Option<String>) -> anyhow::Result<Vec<Endpoint>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints e
             WHERE $1::text IS NULL OR e.partner_slug = $1
             ORDER BY e.partner_slug, e.created_at, e.id"
        ))
        .bind::<Nullable<Text>, _>(partner)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("listing every webhook endpoint")?;
        endpoints(rows)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn disable(&self, id: WebhookId) -> anyhow::Result<Option<Endpoint>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "UPDATE webhook_endpoints e SET enabled = false, disabled_reason = 'operator'
             WHERE e.id = $1
             RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind::<SqlUuid, _>(id.0)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("disabling a webhook endpoint")?;
        Ok(endpoints(rows)?.pop())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn update(
        &self,
        partner: &str,
        id: WebhookId,
        changes: &EndpointChanges,
    ) -> anyhow::Result<Option<Endpoint>> {
        let mut conn = checkout(&self.pool).await?;
        let enabling = changes.enabled == Some(true);
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "UPDATE webhook_endpoints e SET
                 url = COALESCE($3, e.url),
                 types = COALESCE($4, e.types),
                 games = COALESCE($5, e.games),
                 description = CASE WHEN $6 THEN $7 ELSE e.description END,
                 enabled = COALESCE($8, e.enabled) AND e.disabled_reason IS DISTINCT FROM 'operator',
                 disabled_reason = CASE WHEN $9 AND e.disabled_reason IS DISTINCT FROM 'operator'
                     THEN NULL ELSE e.disabled_reason END,
                 consecutive_failures = CASE WHEN $9 THEN 0 ELSE e.consecutive_failures END
             WHERE e.partner_slug = $1 AND e.id = $2
             RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind::<Text, _>(partner)
        .bind::<SqlUuid, _>(id.0)
        .bind::<Nullable<Text>, _>(changes.url.as_ref().map(|url| url.as_str().to_owned()))
        .bind::<Nullable<Array<Text>>, _>(changes.types.as_ref().map(TypeSelection::names))
        .bind::<Nullable<Array<Text>>, _>(changes.games.as_ref().map(GameSelection::names))
        .bind::<Bool, _>(changes.description.is_some())
        .bind::<Nullable<Text>, _>(changes.description.clone().flatten())
        .bind::<Nullable<Bool>, _>(changes.enabled)
        .bind::<Bool, _>(enabling)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("updating a webhook endpoint")?;
        Ok(endpoints(rows)?.pop())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn delete(&self, partner: &str, id: WebhookId) -> anyhow::Result<bool> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        // The deliveries first, then the endpoint: the order `record` locks them in. Deleting
        // the endpoint alone locked it, then its deliveries through the cascade, and an
        // attempt being recorded at that moment (its delivery locked, waiting for the
        // endpoint) deadlocked with it: a 500 (found by `cargo xtask fuzz`).
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            diesel::sql_query(
                "DELETE FROM webhook_deliveries WHERE endpoint_id IN (
                     SELECT id FROM webhook_endpoints WHERE partner_slug = $1 AND id = $2)",
            )
            .bind::<Text, _>(partner)
            .bind::<SqlUuid, _>(id.0)
            .execute(conn)
            .await
            .map_err(error::query)
            .context("deleting a webhook endpoint's deliveries")?;
            let deleted = diesel::sql_query(
                "DELETE FROM webhook_endpoints WHERE partner_slug = $1 AND id = $2",
            )
            .bind::<Text, _>(partner)
            .bind::<SqlUuid, _>(id.0)
            .execute(conn)
            .await
            .map_err(error::query)
            .context("deleting a webhook endpoint")?;
            Ok(deleted > 0)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn rotate_secret(
        &self,
        partner: &str,
        id: WebhookId,
        sealed: Vec<u8>,
        previous_until: OffsetDateTime,
    ) -> anyhow::Result<Option<Endpoint>> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<EndpointRow> = diesel::sql_query(format!(
            "UPDATE webhook_endpoints e SET
                 previous_secret_sealed = e.secret_sealed,
                 previous_secret_until = $4,
                 secret_sealed = $3
             WHERE e.partner_slug = $1 AND e.id = $2
             RETURNING {ENDPOINT_COLUMNS}"
        ))
        .bind::<Text, _>(partner)
        .bind::<SqlUuid, _>(id.0)
        .bind::<Bytea, _>(sealed)
        .bind::<Timestamptz, _>(previous_until)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("rotating a webhook secret")?;
        Ok(endpoints(rows)?.pop())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn enqueue_ping(&self, ping: &Delivery) -> anyhow::Result<Delivery> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            // The endpoint's row lock makes pings of one endpoint one after the other: a second
            // waits here, and its next statement (READ COMMITTED) sees the first one's ping. The
            // lock is the one claims take, not the one delivery inserts check, so fan-out goes on.
            let locked = diesel::sql_query(
                "SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE",
            )
            .bind::<SqlUuid, _>(ping.endpoint.0)
            .execute(conn)
            .await
            .map_err(error::query)
            .context("locking the endpoint of a ping")?;
            if locked == 0 {
                // Deleted since it was found: nothing to queue for.
                return Ok(ping.clone());
            }
            let pending: Vec<DeliveryRow> = diesel::sql_query(format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d
                 WHERE d.endpoint_id = $1 AND d.status = 'pending'
                     AND d.event_type = 'webhook.ping'
                 ORDER BY d.created_at, d.id LIMIT 1"
            ))
            .bind::<SqlUuid, _>(ping.endpoint.0)
            .load(conn)
            .await
            .map_err(error::query)
            .context("reading an endpoint's pending ping")?;
            if let Some(pending) = pending.into_iter().next() {
                return pending.into_domain();
            }
            insert_deliveries(conn, std::slice::from_ref(ping)).await?;
            Ok(ping.clone())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn deliveries(
        &self,
        partner: &str,
        id: WebhookId,
        limit: u32,
        after: Option<DeliveryId>,
    ) -> anyhow::Result<Option<Vec<Delivery>>> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            if find_endpoint(conn, partner, id).await?.is_none() {
                return Ok(None);
            }
            let rows: Vec<DeliveryRow> = diesel::sql_query(format!(
                "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d
                 WHERE d.endpoint_id = $1 AND ($2::uuid IS NULL OR d.id < $2)
                 ORDER BY d.id DESC LIMIT $3"
            ))
            .bind::<SqlUuid, _>(id.0)
            .bind::<Nullable<SqlUuid>, _>(after.map(|after| after.0))
            .bind::<BigInt, _>(i64::from(limit))
            .load(conn)
            .await
            .map_err(error::query)
            .context("reading webhook deliveries")?;
            rows.into_iter()
                .map(DeliveryRow::into_domain)
                .collect::<anyhow::Result<Vec<_>>>()
                .map(Some)
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn retry(
        &self,
        partner: &str,
        id: WebhookId,
        delivery: DeliveryId,
        now: OffsetDateTime,
    ) -> anyhow::Result<bool> {
        let mut conn = checkout(&self.pool).await?;
        let updated = diesel::sql_query(
            "UPDATE webhook_deliveries d SET
                 retries_used = CASE WHEN d.status = 'pending' THEN d.retries_used ELSE $5 END,
                 status = 'pending', next_attempt_at = $4
             FROM webhook_endpoints e
             WHERE e.id = d.endpoint_id AND e.partner_slug = $1 AND d.endpoint_id = $2
                 AND d.id = $3",
        )
        .bind::<Text, _>(partner)
        .bind::<SqlUuid, _>(id.0)
        .bind::<SqlUuid, _>(delivery.0)
        .bind::<Timestamptz, _>(now)
        .bind::<Integer, _>(ONE_MORE_ATTEMPT)
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .context("retrying a webhook delivery")?;
        Ok(updated > 0)
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn fan_out(&self, limit: u32, now: OffsetDateTime) -> anyhow::Result<u32> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            // One dispatcher at a time; the others find the row taken and go on.
            let watermark: Vec<Watermark> = diesel::sql_query(
                "SELECT last_sequence FROM webhook_dispatch FOR UPDATE SKIP LOCKED",
            )
            .load(conn)
            .await
            .map_err(error::query)
            .context("taking the webhook dispatch watermark")?;
            let Some(watermark) = watermark.into_iter().next() else {
                return Ok(0);
            };
            let events: Vec<Event> =
                read_events_after(conn, watermark.last_sequence, limit).await?;
            let Some(last) = events.last().map(|event| event.sequence) else {
                return Ok(0);
            };
            let rows: Vec<EndpointRow> = diesel::sql_query(format!(
                "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints e WHERE e.enabled"
            ))
            .load(conn)
            .await
            .map_err(error::query)
            .context("reading enabled webhook endpoints")?;
            let deliveries = fan_out(&events, &endpoints(rows)?, now, || {
                DeliveryId(Uuid::now_v7())
            });
            insert_deliveries(conn, &deliveries).await?;
            diesel::sql_query("UPDATE webhook_dispatch SET last_sequence = $1")
                .bind::<BigInt, _>(last)
                .execute(conn)
                .await
                .map_err(error::query)
                .context("moving the webhook dispatch watermark")?;
            Ok(u32::try_from(events.len()).unwrap_or(u32::MAX))
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn claim(
        &self,
        now: OffsetDateTime,
        limit: u32,
        lease: Duration,
    ) -> anyhow::Result<Vec<ClaimedDelivery>> {
        let lease_until = now + lease;
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        let rows = conn
            .transaction::<_, anyhow::Error, _>(async |conn| {
                // First the endpoints this claim serves, locked: those with a due delivery and
                // room beside their deliveries in flight, in the order their next deliveries
                // come (`webhooks::fair_claim`: fewest in flight, then longest waiting), at most
                // one per delivery wanted: the deliveries taken below come from these alone.
                // The lock makes claims of one endpoint one after the other across instances
                // (another instance's claim skips it), so two claims cannot each count the
                // same room and take it twice. It conflicts neither with the key-share lock of
                // delivery inserts (fan-out, pings go on) nor long with anything: it is held
                // for this short transaction.
                let locked: Vec<EndpointIdRow> = diesel::sql_query(format!(
                    "SELECT e.id AS endpoint_id FROM webhook_endpoints e
                     CROSS JOIN LATERAL ({IN_FLIGHT}) AS busy (n)
                     CROSS JOIN LATERAL ({OLDEST_DUE}) AS oldest
                     WHERE {ENDPOINT_CLAIMABLE} AND busy.n < {MAX_IN_FLIGHT}
                     ORDER BY busy.n, oldest.next_attempt_at, e.id
                     LIMIT $2
                     FOR NO KEY UPDATE OF e SKIP LOCKED",
                    OLDEST_DUE = claimable_due(1),
                    MAX_IN_FLIGHT = MAX_IN_FLIGHT_PER_ENDPOINT,
                ))
                .bind::<Timestamptz, _>(now)
                .bind::<BigInt, _>(i64::from(limit))
                .load(conn)
                .await
                .map_err(error::query)
                .context("locking webhook endpoints with due deliveries")?;
                if locked.is_empty() {
                    return Ok(Vec::new());
                }
                // Then, under those locks, a statement of its own (READ COMMITTED: it sees
                // every claim of these endpoints committed before their locks were had), each
                // endpoint's room counted again and filled with its oldest due deliveries,
                // round by round: every endpoint's first attempt in flight, then every
                // endpoint's second (one with an attempt in flight starts in the second).
                // Rows another transaction holds are skipped, as the endpoints were: a claim
                // waits for no lock, so it can be in no deadlock (an attempt being recorded
                // holds its delivery and waits for the endpoint; a delete takes the deliveries
                // first, then the endpoint).
                let locked: Vec<Uuid> = locked.into_iter().map(|row| row.endpoint_id).collect();
                let rows: Vec<ClaimRow> = diesel::sql_query(format!(
                    "WITH picked AS (
                         SELECT due.id FROM webhook_endpoints e
                         CROSS JOIN LATERAL ({IN_FLIGHT}) AS busy (n)
                         CROSS JOIN LATERAL (
                             SELECT c.id, c.next_attempt_at,
                                 busy.n + row_number() OVER (ORDER BY c.next_attempt_at, c.id)
                                     AS round
                             FROM ({DUE}) AS c
                         ) AS due
                         WHERE e.id = ANY ($4) AND due.round <= {MAX_IN_FLIGHT}
                         ORDER BY due.round, due.next_attempt_at, e.id
                         LIMIT $2
                     ), taken AS (
                         SELECT d.id FROM webhook_deliveries d
                         WHERE d.id IN (SELECT id FROM picked) AND d.status = 'pending'
                             AND (d.lease_until IS NULL OR d.lease_until <= $1)
                         FOR UPDATE OF d SKIP LOCKED
                     )
                     UPDATE webhook_deliveries d SET lease_until = $3
                     FROM taken, webhook_endpoints e, partners p
                     WHERE d.id = taken.id AND e.id = d.endpoint_id AND p.slug = e.partner_slug
                     RETURNING {DELIVERY_COLUMNS}, {ENDPOINT_COLUMNS},
                         p.created_by AS owner_created_by, p.scopes AS owner_scopes,
                         p.game_scopes AS owner_game_scopes, p.active AS owner_active",
                    DUE = claimable_due(MAX_IN_FLIGHT_PER_ENDPOINT),
                    MAX_IN_FLIGHT = MAX_IN_FLIGHT_PER_ENDPOINT,
                ))
                .bind::<Timestamptz, _>(now)
                .bind::<BigInt, _>(i64::from(limit))
                .bind::<Timestamptz, _>(lease_until)
                .bind::<Array<SqlUuid>, _>(locked)
                .load(conn)
                .await
                .map_err(error::query)
                .context("claiming webhook deliveries")?;
                Ok(rows)
            })
            .await?;
        rows.into_iter()
            .map(|row| {
                let slug = row.endpoint.partner_slug.clone();
                Ok(ClaimedDelivery {
                    delivery: row.delivery.into_domain()?,
                    endpoint: row.endpoint.into_domain()?,
                    owner: WebhookOwner {
                        created_by: UserId(row.owner.owner_created_by),
                        scopes: stored_scopes(
                            &row.owner.owner_scopes,
                            format_args!("partner {slug}"),
                        ),
                        game_scopes: GameScopes::parse_list(&row.owner.owner_game_scopes.join(" "))
                            .with_context(|| format!("partner {slug} has invalid game scopes"))?,
                        active: row.owner.owner_active,
                    },
                })
            })
            .collect()
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn record(&self, record: &AttemptRecord) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        let conn: &mut AsyncPgConnection = &mut conn;
        // The delivery (unless another attempt was recorded since the claim), then its
        // endpoint's health as the domain decides it, under the endpoint's row lock: attempts
        // of one endpoint recorded at once count one after the other.
        conn.transaction::<_, anyhow::Error, _>(async |conn| {
            let attempted: Vec<EndpointIdRow> = diesel::sql_query(
                "UPDATE webhook_deliveries SET attempt = $2, retries_used = $3, status = $4,
                     response_status = $5, response_body = $6, duration_ms = $7, error = $8,
                     attempted_at = $9, next_attempt_at = $10, lease_until = NULL
                 WHERE id = $1 AND attempt = $2 - 1
                 RETURNING endpoint_id",
            )
            .bind::<SqlUuid, _>(record.delivery.0)
            .bind::<Integer, _>(record.attempt)
            .bind::<Integer, _>(record.retries_used)
            .bind::<Text, _>(record.status.as_str())
            .bind::<Nullable<Integer>, _>(record.response_status)
            .bind::<Nullable<Text>, _>(record.response_body.as_deref())
            .bind::<BigInt, _>(record.duration_ms)
            .bind::<Nullable<Text>, _>(record.error.as_deref())
            .bind::<Timestamptz, _>(record.attempted_at)
            .bind::<Nullable<Timestamptz>, _>(record.next_attempt_at)
            .load(conn)
            .await
            .map_err(error::query)
            .context("recording a webhook attempt")?;
            let Some(EndpointIdRow { endpoint_id }) = attempted.into_iter().next() else {
                return Ok(());
            };
            let rows: Vec<HealthRow> = diesel::sql_query(
                "SELECT enabled, disabled_reason, consecutive_failures FROM webhook_endpoints
                 WHERE id = $1 FOR UPDATE",
            )
            .bind::<SqlUuid, _>(endpoint_id)
            .load(conn)
            .await
            .map_err(error::query)
            .context("locking a webhook endpoint")?;
            let Some(health) = rows.into_iter().next().map(HealthRow::into_domain) else {
                return Ok(());
            };
            let after = health.after(record);
            if after != health {
                diesel::sql_query(
                    "UPDATE webhook_endpoints SET enabled = $2, disabled_reason = $3,
                         consecutive_failures = $4
                     WHERE id = $1",
                )
                .bind::<SqlUuid, _>(endpoint_id)
                .bind::<Bool, _>(after.enabled)
                .bind::<Nullable<Text>, _>(after.disabled_reason.map(DisabledReason::as_str))
                .bind::<Integer, _>(after.consecutive_failures)
                .execute(conn)
                .await
                .map_err(error::query)
                .context("recording a webhook endpoint's health")?;
            }
            Ok(())
        })
        .await
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn discard(&self, delivery: DeliveryId) -> anyhow::Result<()> {
        let mut conn = checkout(&self.pool).await?;
        diesel::sql_query("DELETE FROM webhook_deliveries WHERE id = $1")
            .bind::<SqlUuid, _>(delivery.0)
            .execute(&mut conn)
            .await
            .map_err(error::query)
            .context("discarding a webhook delivery")?;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn next_due(&self, now: OffsetDateTime) -> anyhow::Result<Option<OffsetDateTime>> {
        let mut conn = checkout(&self.pool).await?;
        // Per endpoint with claimable deliveries (`webhooks::next_claimable`): the first end of
        // its leases when it has no room, else the soonest of its waiting deliveries' due
        // times and its leases' ends (a lease that ran out is due again).
        let rows: Vec<Due> = diesel::sql_query(format!(
            "SELECT min(CASE
                 WHEN LEAST(waiting.due, leased.due) IS NULL THEN NULL
                 WHEN busy.n >= {MAX_IN_FLIGHT} THEN busy.first_end
                 ELSE LEAST(waiting.due, leased.due)
             END) AS due
             FROM webhook_endpoints e
             CROSS JOIN LATERAL (
                 SELECT count(*) AS n, min(l.lease_until) AS first_end FROM webhook_deliveries l
                 WHERE l.endpoint_id = e.id AND l.lease_until > $1
             ) AS busy
             CROSS JOIN LATERAL (
                 SELECT min(GREATEST(l.next_attempt_at, l.lease_until)) AS due
                 FROM webhook_deliveries l
                 WHERE l.endpoint_id = e.id AND l.lease_until IS NOT NULL
                     AND l.status = 'pending'
                     AND (e.enabled OR l.event_type = 'webhook.ping')
             ) AS leased
             CROSS JOIN LATERAL (SELECT min(w.next_attempt_at) AS due FROM ({WAITING}) AS w)
                 AS waiting
             WHERE {ENDPOINT_CLAIMABLE}",
            MAX_IN_FLIGHT = MAX_IN_FLIGHT_PER_ENDPOINT,
            WAITING = pending_of_endpoint("d.lease_until IS NULL", 1),
        ))
        .bind::<Timestamptz, _>(now)
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("reading when the next webhook delivery is due")?;
        Ok(rows.into_iter().next().and_then(|row| row.due))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn wait_for_work(&self, timeout: Duration) -> anyhow::Result<()> {
        let _ = tokio::time::timeout(timeout, self.wake.0.notified()).await;
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn stats(&self) -> anyhow::Result<QueueStats> {
        let mut conn = checkout(&self.pool).await?;
        let rows: Vec<Stats> = diesel::sql_query(format!(
            "SELECT count(*) AS pending, min(d.created_at) AS oldest
             FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
             WHERE {CLAIMABLE}"
        ))
        .load(&mut conn)
        .await
        .map_err(error::query)
        .context("counting pending webhook deliveries")?;
        Ok(rows
            .into_iter()
            .next()
            .map_or_else(QueueStats::default, |row| QueueStats {
                pending: u64::try_from(row.pending).unwrap_or(0),
                oldest_pending: row.oldest,
            }))
    }

    #[tracing::instrument(level = "debug", skip_all)]
    async fn prune(&self, before: OffsetDateTime, limit: u32) -> anyhow::Result<u64> {
        let mut conn = checkout(&self.pool).await?;
        let deleted = diesel::sql_query(
            "DELETE FROM webhook_deliveries WHERE id = ANY (ARRAY(
                 SELECT id FROM webhook_deliveries
                 WHERE created_at < $1 AND status <> 'pending'
                 LIMIT $2 FOR UPDATE SKIP LOCKED))",
        )
        .bind::<Timestamptz, _>(before)
        .bind::<BigInt, _>(i64::from(limit))
        .execute(&mut conn)
        .await
        .map_err(error::query)
        .context("pruning webhook deliveries")?;
        Ok(deleted as u64)
    }
}
