//! Wire shapes of format rules and format checks (contract, "Format checks").

use deckhand_domain::formats::{CheckReport, Problem};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

use super::games::FormatDto;

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
    /// `restricted`, `commander`, `color_identity`, `unresolved` or `legality_unknown` (no
    /// legality recorded for the card in the format at `as_of`: unknown, not illegal); in
    /// `fab` also `hero` (not exactly one hero, or one of the wrong age), `hero_legality` (a
    /// card whose legal heroes do not name the deck's hero) and `pool_size`.
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
            format: FormatDto::from(&report.format),
            as_of: report.as_of,
            problems: report.problems.into_iter().map(Into::into).collect(),
        }
    }
}
