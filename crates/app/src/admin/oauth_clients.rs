//! `admin oauth-client ...`: registering, listing and disabling OAuth clients.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::identity::{PartnerSlug, Scopes};
use deckhand_domain::oauth::{ClientId, GrantType, NewClientRequest, RedirectUri};
use serde_json::{Value, json};

use crate::cli::OAuthClientCommand;

use super::output::rfc3339;

pub(super) async fn execute(
    services: &Services,
    command: OAuthClientCommand,
) -> anyhow::Result<Value> {
    match command {
        OAuthClientCommand::Create {
            partner,
            name,
            redirect_uris,
            scopes,
            public,
            grant_types,
        } => {
            let grant_types = grant_types
                .map(|list| {
                    list.split([' ', ','])
                        .filter(|part| !part.is_empty())
                        .map(|part| {
                            GrantType::parse(part).ok_or_else(|| {
                                anyhow::anyhow!(
                                    "unknown grant type `{part}`; use authorization_code and/or refresh_token"
                                )
                            })
                        })
                        .collect::<anyhow::Result<_>>()
                })
                .transpose()?;
            let (client, secret) = services
                .oauth
                .create_client(NewClientRequest {
                    partner: PartnerSlug::parse(&partner)?,
                    name,
                    redirect_uris: redirect_uris
                        .iter()
                        .map(|uri| RedirectUri::parse(uri))
                        .collect::<Result<_, _>>()?,
                    scopes: Scopes::parse_list(&scopes)?,
                    public,
                    grant_types,
                })
                .await
                .with_context(|| format!("cannot create an OAuth client for `{partner}`"))?;
            Ok(json!({ "client_id": client.id.to_string(), "client_secret": secret }))
        }
        OAuthClientCommand::List { partner } => {
            let partner = partner.as_deref().map(PartnerSlug::parse).transpose()?;
            let clients = services.oauth.list_clients(partner).await?;
            let clients: Vec<Value> = clients
                .iter()
                .map(|client| {
                    Ok(json!({
                        "client_id": client.id.to_string(),
                        "partner": client.partner.as_str(),
                        "name": client.name,
                        "public": client.is_public(),
                        "redirect_uris": client.redirect_uris.iter().map(RedirectUri::as_str).collect::<Vec<_>>(),
                        "scopes": client.scopes.names(),
                        "grant_types": client.grant_types.iter().map(|kind| kind.as_str()).collect::<Vec<_>>(),
                        "created_at": rfc3339(client.created_at)?,
                        "disabled_at": client.disabled_at.map(rfc3339).transpose()?,
                    }))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(json!({ "oauth_clients": clients }))
        }
        OAuthClientCommand::Disable { id } => {
            let client = services
                .oauth
                .disable_client(ClientId(id))
                .await?
                .with_context(|| format!("cannot disable OAuth client `{id}`: no such client"))?;
            Ok(json!({ "client_id": client.id.to_string(), "active": client.is_active() }))
        }
    }
}
