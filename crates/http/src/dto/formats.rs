//! Wire shapes of format rules and format checks (contract, "Format checks").

use deckhand_domain::formats::{CheckReport, FormatRules, Problem};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use super::games::FormatDto;

/// A format's deck rules.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FormatRulesDto {
    /// The fewest mainboard cards (0: the size is `commander.deck_size`).
    main_min: u32,
    main_max: Option<u32>,
    /// The most sideboard cards, a companion included outside commander formats.
    sideboard_max: Option<u32>,
    /// Copies of a card by name across the counted sections.
    copy_limit: u32,
    singleton: bool,
    commander: Option<CommanderRulesDto>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CommanderRulesDto {
    count_max: u32,
    /// Exact size of the commander and mainboard sections together.
    deck_size: u32,
    color_identity: bool,
}

impl From<FormatRules> for FormatRulesDto {
    fn from(rules: FormatRules) -> Self {
        Self {
            main_min: rules.main_min,
            main_max: rules.main_max,
            sideboard_max: rules.sideboard_max,
            copy_limit: rules.copy_limit,
            singleton: rules.singleton,
            commander: rules.commander.map(|commander| CommanderRulesDto {
                count_max: commander.count_max,
                deck_size: commander.deck_size,
                color_identity: commander.color_identity,
            }),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemCardDto {
    #[serde(rename = "cardId")]
    card_id: Uuid,
    name: String,
}

/// One reason a deck is not legal.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProblemDto {
    /// `main_size`, `sideboard_size`, `deck_size`, `copy_limit`, `banned`, `not_legal`,
    /// `restricted`, `commander`, `color_identity` or `unresolved`.
    rule: &'static str,
    section: Option<String>,
    card: Option<ProblemCardDto>,
    count: Option<u32>,
    limit: Option<u32>,
    message: String,
}

impl From<Problem> for ProblemDto {
    fn from(problem: Problem) -> Self {
        Self {
            rule: problem.rule.as_str(),
            section: problem.section,
            card: problem.card.map(|card| ProblemCardDto {
                card_id: card.card_id,
                name: card.name,
            }),
            count: problem.count,
            limit: problem.limit,
            message: problem.message,
        }
    }
}

/// Whether a deck is legal in a format at a time, and every reason it is not.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "format": {"id": "59b2f751-ebfb-5171-bef0-554ccfd0df1b", "slug": "modern", "name": "Modern"},
    "as_of": "2026-11-26T00:00:00Z", "legal": false,
    "problems": [{"rule": "banned", "section": null,
        "card": {"cardId": "02090581-61aa-4348-ad57-451be8ee91c2", "name": "Ponder"},
        "count": 4, "limit": 0, "message": "Ponder is banned in Modern"}]
}))]
pub struct CheckReportDto {
    format: FormatDto,
    #[serde(with = "time::serde::rfc3339")]
    as_of: OffsetDateTime,
    legal: bool,
    /// Sorted by `rule`, then card name (problems naming no card first).
    problems: Vec<ProblemDto>,
}

impl From<CheckReport> for CheckReportDto {
    fn from(report: CheckReport) -> Self {
        Self {
            legal: report.legal(),
            format: report.format.into(),
            as_of: report.as_of,
            problems: report.problems.into_iter().map(Into::into).collect(),
        }
    }
}
