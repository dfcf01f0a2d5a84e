//! `admin pat ...`: creating personal access tokens.

use deckhand_domain::Services;
use deckhand_domain::identity::{NewPatRequest, Scopes, UserLookup};
use serde_json::{Value, json};

use crate::cli::PatCommand;

pub(super) async fn execute(services: &Services, command: PatCommand) -> anyhow::Result<Value> {
    match command {
        PatCommand::Create {
            user,
            scopes,
            name,
            expires_days,
        } => {
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
    }
}
