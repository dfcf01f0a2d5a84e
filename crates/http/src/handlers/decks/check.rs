use actix_web::{HttpResponse, get, web};
use deckhand_domain::validation::Violations;
use serde::Deserialize;
use time::OffsetDateTime;
use utoipa::IntoParams;

use crate::access::{DeckPath, PathAccess, ReadDecks};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::dto::formats::CheckReportDto;
use crate::error::ApiError;
use crate::pagination::instant;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct CheckQuery {
    /// A format of the game by slug or id; default the deck's own.
    format: Option<String>,
    /// RFC 3339, or a date (`2019-03-01`: the start of that day, UTC); the legalities in
    /// force then apply. Default now.
    as_of: Option<String>,
}

/// `as_of` as the check uses it: UTC, to the microsecond (what timestamps carry everywhere);
/// a date is the start of that day.
pub(crate) fn as_of(value: &Option<String>) -> Result<Option<OffsetDateTime>, ApiError> {
    let day = value.as_deref().and_then(|text| {
        time::Date::parse(
            text,
            time::macros::format_description!("[year]-[month]-[day]"),
        )
        .ok()
    });
    if let Some(day) = day {
        return Ok(Some(day.midnight().assume_utc()));
    }
    let mut v = Violations::default();
    let at = instant("as_of", value, &mut v);
    v.into_result(())?;
    Ok(at.map(|at| {
        let at = at.to_offset(time::UtcOffset::UTC);
        at.replace_nanosecond(at.nanosecond() / 1000 * 1000)
            .unwrap_or(at)
    }))
}

/// Whether a stored deck is legal in a format (default the deck's own) at a time, and every
/// reason it is not. The deck detail's visibility rules apply.
#[utoipa::path(
    tag = "decks",
    params(DeckPath, CheckQuery),
    responses(
        (status = 200, body = CheckReportDto),
        (status = 400, description = "An unknown format, a deck without a format and none given, a format without rules, or an invalid `as_of`", body = ErrorEnvelope),
        (status = 403, description = "An authenticated caller without decks:read", body = ErrorEnvelope),
        (status = 404, description = "No such deck, or hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[get("/games/{game}/decks/{id}/check")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, deck = %deck.0))]
pub async fn check_deck(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path: DeckPath { id: deck, .. },
        ..
    }: PathAccess<ReadDecks, DeckPath>,
    query: crate::query::Query<CheckQuery>,
) -> Result<HttpResponse, ApiError> {
    let as_of = as_of(&query.as_of)?;
    let report = state
        .services
        .formats
        .check_deck(&principal, &game, deck, query.format.as_deref(), as_of)
        .await?;
    Ok(HttpResponse::Ok().json(CheckReportDto::from(report)))
}
