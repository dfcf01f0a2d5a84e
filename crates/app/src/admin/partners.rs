//! `admin partner ...`: creating, disabling and listing partners.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::identity::{
    GameScopes, NewPartnerRequest, PartnerSlug, Scopes, Tier, UserLookup,
};
use serde_json::{Value, json};

use crate::cli::PartnerCommand;

use super::output::rfc3339;

pub(super) async fn execute(services: &Services, command: PartnerCommand) -> anyhow::Result<Value> {
    match command {
        PartnerCommand::Create {
            slug,
            owner,
            scopes,
            game_scopes,
            tier,
        } => {
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
        PartnerCommand::Disable { slug } => {
            let partner = services
                .identity
                .disable_partner(&PartnerSlug::parse(&slug)?)
                .await
                .with_context(|| format!("cannot disable partner `{slug}`"))?;
            Ok(json!({ "slug": partner.slug, "active": partner.active }))
        }
        PartnerCommand::List => {
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
    }
}
