//! `admin user ...`: creating and deactivating users.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::identity::UserLookup;
use serde_json::{Value, json};

use crate::cli::UserCommand;

pub(super) async fn execute(services: &Services, command: UserCommand) -> anyhow::Result<Value> {
    match command {
        UserCommand::Create {
            username,
            password,
            premium,
        } => {
            let user = services
                .identity
                .create_user(&username, password.as_deref(), premium)
                .await?;
            Ok(json!({ "id": user.id, "username": user.username }))
        }
        UserCommand::Deactivate { user } => {
            let lookup = UserLookup::parse(&user)?;
            let user = services
                .identity
                .deactivate_user(&lookup)
                .await
                .with_context(|| format!("cannot deactivate `{user}`"))?;
            Ok(json!({ "id": user.id, "active": user.active }))
        }
    }
}
