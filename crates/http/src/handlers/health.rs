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
#[tracing::instrument(level = "debug", skip_all)]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// 200 when the primary answers, else 503 in the envelope, with every database's state
/// (`databases`, also in the envelope's `details`). A replica that does not answer leaves the
/// instance ready: the primary serves the reads it would have. A database that answers but is
/// set up otherwise than the settings say (through a pooler, another `statement_timeout`) is
/// `misconfigured`, with the problem and its fix; the primary so is not ready.
#[tracing::instrument(level = "debug", skip_all)]
pub async fn readyz(state: web::Data<HttpState>) -> Result<HttpResponse, ApiError> {
    let replicas = state
        .router
        .replicas()
        .map(|(replica, services, lag)| async move {
            let found = check(replica, services).await;
            let mut report = found.report(replica);
            if let (Found::Up, Some(lag)) = (&found, lag) {
                report["lag_ms"] = json!(u64::try_from(lag.as_millis()).unwrap_or(u64::MAX));
            }
            report
        });
    let (primary, replicas) = futures_util::join!(
        check(Database::Primary, &state.services),
        futures_util::future::join_all(replicas)
    );
    let databases: Vec<_> = std::iter::once(primary.report(Database::Primary))
        .chain(replicas)
        .collect();
    let details = json!({"databases": databases});
    match primary {
        Found::Up => {
            Ok(HttpResponse::Ok().json(json!({"status": "ready", "databases": databases})))
        }
        Found::Down => Err(ApiError::unavailable().with_details(details)),
        Found::Misconfigured(problem) => {
            Err(ApiError::store_misconfigured(&problem).with_details(details))
        }
    }
}

/// What a readiness check found of one database.
enum Found {
    Up,
    Down,
    /// It answers, but not as the settings say: the problem and its fix.
    Misconfigured(String),
}

impl Found {
    /// The database's entry in `databases`.
    fn report(&self, database: Database) -> serde_json::Value {
        match self {
            Self::Up => json!({"name": database.name(), "status": "up"}),
            Self::Down => json!({"name": database.name(), "status": "down"}),
            Self::Misconfigured(problem) => {
                json!({"name": database.name(), "status": "misconfigured", "problem": problem})
            }
        }
    }
}

/// Whether `database` (whose services are `services`) answers within [`READINESS_TIMEOUT`],
/// and as the settings say.
async fn check(database: Database, services: &Services) -> Found {
    let failure =
        match actix_web::rt::time::timeout(READINESS_TIMEOUT, services.health.ping()).await {
            Ok(Ok(())) => return Found::Up,
            Ok(Err(error)) => {
                if let Some(problem) = deckhand_domain::error::misconfiguration(&error) {
                    tracing::error!(
                        database = database.name(),
                        problem = problem.0,
                        "readiness check: the database is misconfigured"
                    );
                    return Found::Misconfigured(problem.0.clone());
                }
                format!("{error:#}")
            }
            Err(_) => format!("no answer within {READINESS_TIMEOUT:?}"),
        };
    tracing::warn!(
        database = database.name(),
        error = failure,
        "readiness check failed"
    );
    Found::Down
}

/// Prometheus text exposition.
#[tracing::instrument(level = "debug", skip_all)]
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
#[tracing::instrument(level = "debug", skip_all)]
pub async fn openapi_json(document: web::Data<OpenApi>) -> HttpResponse {
    HttpResponse::Ok().json(document.as_ref())
}
