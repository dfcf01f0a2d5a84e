//! `deckhand admin ...`: operator commands over the domain services. Each returns the JSON
//! object the command prints.

use anyhow::Context as _;
use deckhand_auth::CanonicalRequest;
use deckhand_domain::Services;
use deckhand_domain::formats::Legality;
use deckhand_domain::identity::{
    ApiKeyId, GameScopes, NewPartnerRequest, NewPatRequest, PartnerSlug, Scopes, Tier, UserLookup,
};
use deckhand_domain::oauth::{ClientId, GrantType, NewClientRequest, RedirectUri};
use deckhand_domain::webhooks::{DisabledReason, WebhookId};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::cli::{
    AdminCommand, ApiKeyCommand, CatalogCommand, DemoCommand, FormatCommand, OAuthClientCommand,
    PartnerCommand, PatCommand, SignArgs, UserCommand, WebhookCommand,
};

pub async fn execute(services: &Services, command: AdminCommand) -> anyhow::Result<Value> {
    match command {
        AdminCommand::User(UserCommand::Create {
            username,
            password,
            premium,
        }) => {
            let user = services
                .identity
                .create_user(&username, password.as_deref(), premium)
                .await?;
            Ok(json!({ "id": user.id, "username": user.username }))
        }
        AdminCommand::User(UserCommand::Deactivate { user }) => {
            let lookup = UserLookup::parse(&user)?;
            let user = services
                .identity
                .deactivate_user(&lookup)
                .await
                .with_context(|| format!("cannot deactivate `{user}`"))?;
            Ok(json!({ "id": user.id, "active": user.active }))
        }
        AdminCommand::Pat(PatCommand::Create {
            user,
            scopes,
            name,
            expires_days,
        }) => {
            let (pat, token) = services
                .identity
                .create_pat(NewPatRequest {
                    user: UserLookup::parse(&user)?,
                    scopes: Scopes::parse_list(&scopes)?,
                    name,
                    expires_in_days: expires_days,
                })
                .await?;
            Ok(json!({ "id": pat.id, "token": token, "scopes": pat.scopes.names() }))
        }
        AdminCommand::Catalog(CatalogCommand::Import {
            game,
            source,
            as_of,
            file,
        }) => {
            let report = crate::catalog::import_file(services, &game, source, &file, as_of).await?;
            Ok(serde_json::to_value(report)?)
        }
        AdminCommand::Partner(PartnerCommand::Create {
            slug,
            owner,
            scopes,
            game_scopes,
            tier,
        }) => {
            let (partner, secret) = services
                .identity
                .create_partner(NewPartnerRequest {
                    slug: PartnerSlug::parse(&slug)?,
                    owner: UserLookup::parse(&owner)?,
                    scopes: Scopes::parse_list(&scopes)?,
                    game_scopes: GameScopes::parse_list(&game_scopes)?,
                    tier: tier.as_deref().map(Tier::parse).transpose()?,
                })
                .await
                .with_context(|| format!("cannot create partner `{slug}`"))?;
            Ok(json!({ "slug": partner.slug, "secret": secret, "created_by": partner.created_by }))
        }
        AdminCommand::Partner(PartnerCommand::Disable { slug }) => {
            let partner = services
                .identity
                .disable_partner(&PartnerSlug::parse(&slug)?)
                .await
                .with_context(|| format!("cannot disable partner `{slug}`"))?;
            Ok(json!({ "slug": partner.slug, "active": partner.active }))
        }
        AdminCommand::ApiKey(ApiKeyCommand::Create { partner }) => {
            let (key, secret) = services
                .identity
                .create_api_key(&PartnerSlug::parse(&partner)?)
                .await
                .with_context(|| format!("cannot create an API key for `{partner}`"))?;
            Ok(json!({ "id": key.id, "key": secret }))
        }
        AdminCommand::ApiKey(ApiKeyCommand::Revoke { id }) => {
            let key = services
                .identity
                .revoke_api_key(ApiKeyId(id))
                .await
                .with_context(|| format!("cannot revoke API key `{id}`"))?;
            Ok(json!({ "id": key.id, "revoked": key.revoked_at.is_some() }))
        }
        AdminCommand::OauthClient(OAuthClientCommand::Create {
            partner,
            name,
            redirect_uris,
            scopes,
            public,
            grant_types,
        }) => {
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
        AdminCommand::OauthClient(OAuthClientCommand::List { partner }) => {
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
        AdminCommand::OauthClient(OAuthClientCommand::Disable { id }) => {
            let client = services
                .oauth
                .disable_client(ClientId(id))
                .await?
                .with_context(|| format!("cannot disable OAuth client `{id}`: no such client"))?;
            Ok(json!({ "client_id": client.id.to_string(), "active": client.is_active() }))
        }
        AdminCommand::Partner(PartnerCommand::List) => {
            let partners: Vec<Value> = services
                .identity
                .list_partners()
                .await?
                .iter()
                .map(|partner| {
                    Ok(json!({
                        "slug": partner.slug,
                        "created_by": partner.created_by,
                        "scopes": partner.scopes.names(),
                        "game_scopes": partner.game_scopes.names(),
                        "tier": partner.tier.0,
                        "active": partner.active,
                        "created_at": rfc3339(partner.created_at)?,
                    }))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(json!({ "partners": partners }))
        }
        AdminCommand::ApiKey(ApiKeyCommand::List { partner }) => {
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
        AdminCommand::Webhook(WebhookCommand::List { partner }) => {
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
        AdminCommand::Webhook(WebhookCommand::Disable { id }) => {
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
        AdminCommand::Format(FormatCommand::Legality {
            game,
            format,
            card,
            status,
            from,
        }) => {
            let status =
                Legality::parse(&status).with_context(|| format!("unknown status {status:?}"))?;
            let from = from.as_deref().map(parse_from).transpose()?;
            let game = services
                .catalog
                .game(&game)
                .await
                .with_context(|| format!("unknown game {game:?}"))?;
            let record = services
                .formats
                .record_legality(&game, &format, &card, status, from)
                .await?;
            Ok(json!({
                "game": game.slug,
                "format": record.format.slug,
                "card": {"cardId": record.card_id, "name": record.card_name},
                "status": record.status.as_str(),
                "from": record.from.format(&Rfc3339)?,
            }))
        }
        AdminCommand::Sign(args) => sign(args, services.system.clock.now()),
        AdminCommand::Demo(DemoCommand::Seed) => {
            let demo = crate::demo::seed(services).await?;
            Ok(serde_json::to_value(demo)?)
        }
    }
}

/// `--from` of `admin format legality`: RFC 3339, or a date meaning its midnight UTC.
fn parse_from(text: &str) -> anyhow::Result<OffsetDateTime> {
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(at.to_offset(time::UtcOffset::UTC));
    }
    let date = time::Date::parse(
        text,
        time::macros::format_description!("[year]-[month]-[day]"),
    )
    .with_context(|| format!("--from {text:?} is neither RFC 3339 nor YYYY-MM-DD"))?;
    Ok(date.midnight().assume_utc())
}

/// `admin sign`: the headers of a signed request, computed exactly as the server checks them.
pub fn sign(args: SignArgs, now: OffsetDateTime) -> anyhow::Result<Value> {
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => std::fs::read(path)
            .with_context(|| format!("cannot read the body file {}", path.display()))?,
        (None, None) => Vec::new(),
    };
    let slug = PartnerSlug::parse(&args.partner)?;
    let method = args.method.to_ascii_uppercase();
    let body_sha256 = deckhand_auth::sha256(&body);
    let request = CanonicalRequest {
        timestamp: args.timestamp.unwrap_or_else(|| now.unix_timestamp()),
        method: &method,
        path: &args.path,
        query: &args.query,
        partner_slug: slug.as_str(),
        body_sha256: &body_sha256,
    };
    let signature = request.sign(args.secret.as_bytes()).render();
    let mut headers = serde_json::Map::new();
    headers.insert("X-Partner-Id".into(), json!(slug.as_str()));
    headers.insert("X-Signature".into(), json!(signature));
    if let Some(pat) = &args.pat {
        headers.insert("Authorization".into(), json!(format!("Bearer {pat}")));
    }
    let url = if args.query.is_empty() {
        format!("{}{}", args.base_url, args.path)
    } else {
        format!("{}{}?{}", args.base_url, args.path, args.query)
    };
    let mut curl = format!("curl -sS -X {method} '{url}'");
    for (name, value) in &headers {
        curl.push_str(&format!(
            " -H '{name}: {}'",
            value.as_str().unwrap_or_default()
        ));
    }
    if let Some(path) = &args.body_file {
        curl.push_str(&format!(" --data-binary @'{}'", path.display()));
    } else if let Some(text) = &args.body {
        curl.push_str(&format!(" --data-binary '{}'", text.replace('\'', "'\\''")));
    }
    Ok(json!({
        "headers": headers,
        "canonical": request.canonical_string(),
        "curl": curl,
    }))
}

/// An instant as the admin commands print it (RFC 3339, UTC).
fn rfc3339(at: OffsetDateTime) -> anyhow::Result<String> {
    Ok(at.format(&Rfc3339)?)
}
