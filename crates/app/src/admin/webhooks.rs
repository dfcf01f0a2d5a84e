//! `admin webhook ...`: listing and disabling webhook endpoints.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::identity::PartnerSlug;
use deckhand_domain::webhooks::{DisabledReason, WebhookId};
use serde_json::{Value, json};

use crate::cli::WebhookCommand;

use super::output::rfc3339;

pub(super) async fn execute(services: &Services, command: WebhookCommand) -> anyhow::Result<Value> {
    match command {
        WebhookCommand::List { partner } => {
            let partner = partner.as_deref().map(PartnerSlug::parse).transpose()?;
            let endpoints: Vec<Value> = services
                .webhooks
                .list_all(partner.as_ref().map(|slug| slug.as_str().to_owned()))
                .await?
                .iter()
                .map(|endpoint| {
                    Ok(json!({
                        "id": endpoint.id.0,
                        "partner": endpoint.partner,
                        "url": endpoint.url,
                        "types": endpoint.types.names(),
                        "games": endpoint.games.names(),
                        "description": endpoint.description,
                        "enabled": endpoint.enabled,
                        "disabled_reason": endpoint.disabled_reason.map(DisabledReason::as_str),
                        "consecutive_failures": endpoint.consecutive_failures,
                        "created_at": rfc3339(endpoint.created_at)?,
                    }))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(json!({ "webhooks": endpoints }))
        }
        WebhookCommand::Disable { id } => {
            let endpoint = services
                .webhooks
                .disable(WebhookId(id))
                .await?
                .with_context(|| format!("cannot disable webhook `{id}`: no such webhook"))?;
            Ok(json!({
                "id": endpoint.id.0,
                "partner": endpoint.partner,
                "enabled": endpoint.enabled,
                "disabled_reason": endpoint.disabled_reason.map(DisabledReason::as_str),
            }))
        }
    }
}
