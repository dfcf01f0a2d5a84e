//! `deckhand admin ...`: operator commands over the domain services. Each returns the JSON
//! object the command prints.

use deckhand_domain::Services;
use serde_json::Value;

use crate::cli::{AdminCommand, DemoCommand};

mod api_keys;
mod catalog;
mod formats;
mod oauth_clients;
mod output;
mod partners;
mod pats;
mod sign;
mod users;
mod webhooks;

pub use sign::sign;

/// Runs one admin command: each noun's commands are in a module of its own.
pub async fn execute(services: &Services, command: AdminCommand) -> anyhow::Result<Value> {
    match command {
        AdminCommand::User(command) => users::execute(services, command).await,
        AdminCommand::Pat(command) => pats::execute(services, command).await,
        AdminCommand::Catalog(command) => catalog::execute(services, command).await,
        AdminCommand::Partner(command) => partners::execute(services, command).await,
        AdminCommand::ApiKey(command) => api_keys::execute(services, command).await,
        AdminCommand::OauthClient(command) => oauth_clients::execute(services, command).await,
        AdminCommand::Webhook(command) => webhooks::execute(services, command).await,
        AdminCommand::Format(command) => formats::execute(services, command).await,
        AdminCommand::Sign(args) => sign(args, services.system.clock.now()),
        AdminCommand::Demo(DemoCommand::Seed) => {
            let demo = crate::demo::seed(services).await?;
            Ok(serde_json::to_value(demo)?)
        }
    }
}
