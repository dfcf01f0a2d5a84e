use actix_web::{HttpResponse, get, web};
use deckhand_domain::webhooks::WebhookId;

use super::{WebhookDto, WebhookPath, partner};
use crate::auth::Caller;
use crate::dto::envelope::ErrorEnvelope;
use crate::error::ApiError;
use crate::state::HttpState;

/// One of the partner's webhook endpoints, without its secret.
#[utoipa::path(
    tag = "webhooks",
    params(WebhookPath),
    responses(
        (status = 200, body = WebhookDto),
        (status = 401, description = "Missing credentials, refused ones, or a lane other than signature alone or API key", body = ErrorEnvelope),
        (status = 404, description = "No such endpoint of this partner", body = ErrorEnvelope),
    ),
    security(("PartnerSignature" = [], "PartnerId" = []), ("ApiKey" = []))
)]
#[get("/webhooks/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(webhook = %path.id))]
pub async fn webhook_detail(
    state: web::Data<HttpState>,
    path: web::Path<WebhookPath>,
    Caller(principal): Caller,
) -> Result<HttpResponse, ApiError> {
    let endpoint = state
        .services
        .webhooks
        .get(partner(&principal)?, WebhookId(path.id))
        .await?;
    Ok(HttpResponse::Ok().json(WebhookDto::from(&endpoint)))
}
