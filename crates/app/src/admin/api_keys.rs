//! `admin api-key ...`: creating, revoking and listing partners' API keys.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::identity::{ApiKeyId, PartnerSlug};
use serde_json::{Value, json};

use crate::cli::ApiKeyCommand;

use super::output::rfc3339;

pub(super) async fn execute(services: &Services, command: ApiKeyCommand) -> anyhow::Result<Value> {
    match command {
        ApiKeyCommand::Create { partner } => {
            let (key, secret) = services
                .identity
                .create_api_key(&PartnerSlug::parse(&partner)?)
                .await
                .with_context(|| format!("cannot create an API key for `{partner}`"))?;
            Ok(json!({ "id": key.id, "key": secret }))
        }
        ApiKeyCommand::Revoke { id } => {
            let key = services
                .identity
                .revoke_api_key(ApiKeyId(id))
                .await
                .with_context(|| format!("cannot revoke API key `{id}`"))?;
            Ok(json!({ "id": key.id, "revoked": key.revoked_at.is_some() }))
        }
        ApiKeyCommand::List { partner } => {
            let partner = partner.as_deref().map(PartnerSlug::parse).transpose()?;
            let keys: Vec<Value> = services
                .identity
                .list_api_keys(partner)
                .await?
                .iter()
                .map(|key| {
                    Ok(json!({
                        "id": key.id,
                        "partner": key.partner,
                        "created_at": rfc3339(key.created_at)?,
                        "revoked_at": key.revoked_at.map(rfc3339).transpose()?,
                    }))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(json!({ "api_keys": keys }))
        }
    }
}
