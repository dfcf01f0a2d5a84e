//! The Deckhand application: settings, telemetry, wiring and the command line. It is the only
//! crate that knows every adapter; everything it does is choose them and connect them.

pub mod admin;
pub mod catalog;
pub mod cli;
pub mod demo;
pub mod passwords;
pub mod server;
pub mod settings;
pub mod store;
pub mod telemetry;
pub mod webhooks;

use deckhand_domain::ports::SystemPorts;
use deckhand_domain::{ServiceSettings, Services};

use crate::cli::{Cli, Command};

/// Runs one parsed command line to completion.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        None => server::serve(cli.serve).await,
        Some(Command::Serve(settings)) => server::serve(settings).await,
        Some(Command::Migrate(store)) => {
            // Straight to PostgreSQL: migrations hold a session's advisory lock.
            let url = store
                .direct_url()
                .ok_or_else(|| anyhow::anyhow!("`deckhand migrate` needs DATABASE_URL"))?;
            deckhand_postgres::run_migrations(url).await?;
            println!("{}", serde_json::json!({ "migrated": true }));
            Ok(())
        }
        Some(Command::Openapi) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&deckhand_http::document())?
            );
            Ok(())
        }
        Some(Command::Admin(admin)) => {
            if let cli::AdminCommand::Sign(args) = admin.command {
                let output = admin::sign(args, time::OffsetDateTime::now_utc())?;
                println!("{output}");
                return Ok(());
            }
            let needs_key = matches!(
                admin.command,
                cli::AdminCommand::Partner(cli::PartnerCommand::Create { .. })
                    | cli::AdminCommand::Demo(_)
            );
            anyhow::ensure!(
                !needs_key || admin.secret_key.is_some(),
                "this command needs DECKHAND_SECRET_KEY (the one `deckhand serve` uses), to seal the partner secret"
            );
            let repositories = store::open_postgres(&admin.store).await?;
            let settings = service_settings(admin.secret_key.as_ref())?;
            let services = Services::new(repositories, SystemPorts::system(), settings);
            let output = admin::execute(&services, admin.command).await?;
            println!("{output}");
            Ok(())
        }
    }
}

/// The services' settings. Without a secret key (only allowed where nothing sealed outlives
/// the process, or where the command seals nothing) a random one is drawn.
pub fn service_settings(
    secret_key: Option<&settings::SecretKey>,
) -> anyhow::Result<ServiceSettings> {
    let key = match secret_key {
        Some(key) => key.0,
        None => deckhand_auth::OsRandom::new().bytes32()?,
    };
    Ok(ServiceSettings::new(key))
}
