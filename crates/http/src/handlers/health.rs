//! Operational endpoints: liveness, readiness, metrics and the OpenAPI document.

use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde_json::json;
use utoipa::openapi::OpenApi;

use deckhand_domain::Services;
use deckhand_domain::routing::Database;

use crate::error::ApiError;
use crate::state::HttpState;

/// How long readiness waits for the store before calling it unavailable.
const READINESS_TIMEOUT: Duration = Duration::from_secs(3);

/// 200 while the process serves requests.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// 200 when the primary answers, else 503 in the envelope, with every database's state
/// (`databases`, also in the envelope's `details`). A replica that does not answer leaves the
/// instance ready: the primary serves the reads it would have.
pub async fn readyz(state: web::Data<HttpState>) -> Result<HttpResponse, ApiError> {
    let replicas = state
        .router
        .replicas()
        .map(|(replica, services, lag)| async move {
            let up = answers(replica, services).await;
            let mut report =
                json!({"name": replica.name(), "status": if up { "up" } else { "down" }});
            if let (true, Some(lag)) = (up, lag) {
                report["lag_ms"] = json!(u64::try_from(lag.as_millis()).unwrap_or(u64::MAX));
            }
            report
        });
    let (primary_up, replicas) = futures_util::join!(
        answers(Database::Primary, &state.services),
        futures_util::future::join_all(replicas)
    );
    let primary =
        json!({"name": Database::Primary.name(), "status": if primary_up { "up" } else { "down" }});
    let databases: Vec<_> = std::iter::once(primary).chain(replicas).collect();
    if primary_up {
        Ok(HttpResponse::Ok().json(json!({"status": "ready", "databases": databases})))
    } else {
        Err(ApiError::unavailable().with_details(json!({"databases": databases})))
    }
}

/// Whether `database` (whose services are `services`) answers within [`READINESS_TIMEOUT`].
async fn answers(database: Database, services: &Services) -> bool {
    let failure =
        match actix_web::rt::time::timeout(READINESS_TIMEOUT, services.health.ping()).await {
            Ok(Ok(())) => return true,
            Ok(Err(error)) => format!("{error:#}"),
            Err(_) => format!("no answer within {READINESS_TIMEOUT:?}"),
        };
    tracing::warn!(
        database = database.name(),
        error = failure,
        "readiness check failed"
    );
    false
}

/// Prometheus text exposition.
pub async fn metrics(state: web::Data<HttpState>) -> Result<HttpResponse, ApiError> {
    let pool = state.services.health.pool_status();
    // The queue is shared: when the store cannot say, the gauges keep their last values.
    let webhooks = match state.services.webhooks.stats().await {
        Ok(stats) => Some((stats, state.services.system.clock.now())),
        Err(error) => {
            tracing::debug!(
                error = format!("{error:#}"),
                "webhook queue figures unavailable"
            );
            None
        }
    };
    let replicas: Vec<_> = state
        .router
        .replicas()
        .map(|(replica, _, lag)| (replica, lag))
        .collect();
    state
        .metrics
        .feed_waits_held(state.services.events.held_waits());
    let body = state.metrics.render(pool, webhooks, &replicas)?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(body))
}

/// The OpenAPI document the router was built from.
pub async fn openapi_json(document: web::Data<OpenApi>) -> HttpResponse {
    HttpResponse::Ok().json(document.as_ref())
}
