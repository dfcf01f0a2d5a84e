//! `admin format ...`: recording a card's legality in a format from a date on.

use anyhow::Context as _;
use deckhand_domain::Services;
use deckhand_domain::formats::Legality;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::cli::FormatCommand;

pub(super) async fn execute(services: &Services, command: FormatCommand) -> anyhow::Result<Value> {
    match command {
        FormatCommand::Legality {
            game,
            format,
            card,
            status,
            from,
        } => {
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
