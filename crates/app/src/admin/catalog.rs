//! `admin catalog ...`: importing a catalog file.

use deckhand_domain::Services;
use serde_json::Value;

use crate::cli::CatalogCommand;

pub(super) async fn execute(services: &Services, command: CatalogCommand) -> anyhow::Result<Value> {
    match command {
        CatalogCommand::Import {
            game,
            source,
            as_of,
            file,
        } => {
            let report = crate::catalog::import_file(services, &game, source, &file, as_of).await?;
            Ok(serde_json::to_value(report)?)
        }
    }
}
