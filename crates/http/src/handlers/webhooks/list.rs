use actix_web::{HttpResponse, get, web};

use super::{WebhookDto, WebhookList, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// The partner's webhook endpoints, oldest first, without secrets.
#[utoipa::path(
    tag = "webhooks",
    responses(
        (status = 200, body = WebhookList),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[get("/webhooks")]
#[tracing::instrument(level = "debug", skip_all)]
pub async fn list_webhooks(
    state: web::Data<HttpState>,
    Caller(principal): Caller,
) -> Result<HttpResponse, ApiError> {
    let endpoints = state.services.webhooks.list(partner(&principal)?).await?;
    Ok(HttpResponse::Ok().json(WebhookList {
        data: endpoints.iter().map(WebhookDto::from).collect(),
    }))
}
