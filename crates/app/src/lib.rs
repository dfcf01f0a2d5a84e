//! The Deckhand application: settings, telemetry, wiring and the command line. It is the only
//! crate that knows every adapter; everything it does is choose them and connect them.

pub mod admin;
pub mod catalog;
pub mod cli;
pub mod demo;
pub mod server;
pub mod settings;
pub mod store;
pub mod telemetry;

use deckhand_domain::Services;
use deckhand_domain::ports::SystemPorts;
use deckhand_domain::settings::ServiceSettings;

use crate::cli::{Cli, Command};

/// Runs one parsed command line to completion.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None => server::serve(cli.serve).await,
        Some(Command::Serve(settings)) => server::serve(settings).await,
        Some(Command::Migrate(store)) => {
            let url = store
                .database_url
                .as_deref()
                .ok_or_else(|| anyhow::anyhow!("`deckhand migrate` needs DATABASE_URL"))?;
            deckhand_postgres::run_migrations(url).await?;
            println!("{}", serde_json::json!({ "migrated": true }));
            Ok(())
        }
        Some(Command::Openapi) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&deckhand_http::openapi::document())?
            );
            Ok(())
        }
        Some(Command::Admin(admin)) => {
            let repositories = store::open_postgres(&admin.store).await?;
            // Admin commands of this release seal nothing, so a throwaway key will do.
            let settings = ServiceSettings::new(deckhand_auth::OsRandom::new().bytes32()?);
            let services = Services::new(repositories, SystemPorts::system(), settings);
            let output = admin::execute(&services, admin.command).await?;
            println!("{output}");
            Ok(())
        }
    }
}
