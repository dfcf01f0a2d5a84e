//! Operational endpoints: liveness, readiness, metrics and the OpenAPI document.

use std::time::Duration;

use actix_web::{HttpResponse, web};
use serde_json::json;
use utoipa::openapi::OpenApi;

use crate::error::ApiError;
use crate::state::HttpState;

/// How long readiness waits for the store before calling it unavailable.
const READINESS_TIMEOUT: Duration = Duration::from_secs(3);

/// 200 while the process serves requests.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// 200 when the store answers, else 503 in the envelope.
pub async fn readyz(state: web::Data<HttpState>) -> Result<HttpResponse, ApiError> {
    let ping = state.services.health.ping();
    match actix_web::rt::time::timeout(READINESS_TIMEOUT, ping).await {
        Ok(Ok(())) => Ok(HttpResponse::Ok().json(json!({"status": "ready"}))),
        Ok(Err(error)) => {
            tracing::warn!(error = format!("{error:#}"), "readiness check failed");
            Err(ApiError::unavailable())
        }
        Err(_) => Err(ApiError::unavailable()),
    }
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
    let body = state.metrics.render(pool, webhooks)?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(body))
}

/// The OpenAPI document the router was built from.
pub async fn openapi_json(document: web::Data<OpenApi>) -> HttpResponse {
    HttpResponse::Ok().json(document.as_ref())
}
