use actix_web::{HttpResponse, get, web};
use deckhand_domain::webhooks::{
    DEFAULT_DELIVERY_LIMIT, DeliveryId, MAX_DELIVERY_LIMIT, WebhookId,
};
use serde::Deserialize;
use utoipa::IntoParams;
use uuid::Uuid;

use super::{DeliveryDto, DeliveryPage, WebhookPath, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::{ApiError, FieldError};
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveriesQuery {
    /// 1 to 100, default 50.
    limit: Option<u32>,
    /// The `id` of the last delivery of the previous page: older ones follow.
    after: Option<Uuid>,
}

/// The endpoint's deliveries, newest first.
#[utoipa::path(
    tag = "webhooks",
    params(WebhookPath, DeliveriesQuery),
    responses(
        (status = 200, body = DeliveryPage),
        (status = 400, description = "`limit` or `after` is malformed", body = ErrorEnvelope),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[get("/webhooks/{id}/deliveries")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id))]
pub async fn list_deliveries(
    state: web::Data<HttpState>,
    path: web::Path<WebhookPath>,
    Caller(principal): Caller,
    query: crate::query::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let partner = partner(&principal)?;
    let limit = query.limit.unwrap_or(DEFAULT_DELIVERY_LIMIT);
    if !(1..=MAX_DELIVERY_LIMIT).contains(&limit) {
        return Err(ApiError::validation(vec![FieldError {
            field: "limit".into(),
            code: "range".into(),
            message: format!("must be 1 to {MAX_DELIVERY_LIMIT}"),
        }]));
    }
    let mut deliveries = state
        .services
        .webhooks
        .deliveries(
            partner,
            WebhookId(path.id),
            limit + 1,
            query.after.map(DeliveryId),
        )
        .await?;
    let has_more = deliveries.len() > limit as usize;
    deliveries.truncate(limit as usize);
    Ok(HttpResponse::Ok().json(DeliveryPage {
        data: deliveries.iter().map(DeliveryDto::from).collect(),
        has_more,
    }))
}
