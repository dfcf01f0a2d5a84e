//! `deckhand admin ...`: operator commands over the domain services. Each returns the JSON
//! object the command prints.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::identity::{NewPatRequest, Scopes, UserLookup};
use serde_json::{Value, json};

use crate::cli::{AdminCommand, CatalogCommand, DemoCommand, PatCommand, UserCommand};

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
        AdminCommand::Catalog(CatalogCommand::Import { game, source, file }) => {
            let report = crate::catalog::import_file(services, &game, source, &file).await?;
            Ok(serde_json::to_value(report)?)
        }
        AdminCommand::Demo(DemoCommand::Seed) => {
            let demo = crate::demo::seed(services).await?;
            Ok(serde_json::to_value(demo)?)
        }
    }
}
