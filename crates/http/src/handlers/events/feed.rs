use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, get, web};
use deckhand_domain::events::{
    Cursor, DEFAULT_FEED_LIMIT, FeedRequest, MAX_FEED_LIMIT, MAX_FEED_WAIT, TypeFilter,
};
use deckhand_domain::validation::{FieldViolation, Violations};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::access::{GamePath, PathAccess, ReadEvents, ReplicaMayServe};
use crate::connection::PeerGone;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::dto::events::EventPageDto;
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct FeedParams {
    /// The `next_cursor` of an earlier page; without it, from the oldest retained event.
    after: Option<String>,
    /// Comma-separated event types, or prefixes ending in `.*` (`deck.*`); default all.
    types: Option<String>,
    /// 1 to 100 (default 100).
    limit: Option<i64>,
    /// 0 to 30 seconds (default 0): with nothing new, hold the request until an event the
    /// caller may read commits, or the time is up.
    wait: Option<i64>,
}

impl FeedParams {
    fn into_request(self) -> Result<FeedRequest, Violations> {
        let mut v = Violations::default();
        let after = self.after.as_deref().and_then(|text| {
            v.check(
                Cursor::parse(text)
                    .map_err(|error| FieldViolation::new("after", "invalid", error.to_string())),
            )
        });
        let types = v.check(self.types.as_deref().map_or(Ok(TypeFilter::all()), |list| {
            TypeFilter::parse(list)
                .map_err(|error| FieldViolation::new("types", "invalid", error.to_string()))
        }));
        let limit = v.check(within(
            "limit",
            self.limit,
            1,
            MAX_FEED_LIMIT,
            DEFAULT_FEED_LIMIT,
        ));
        let wait = v.check(within(
            "wait",
            self.wait,
            0,
            MAX_FEED_WAIT.as_secs() as u32,
            0,
        ));
        match (types, limit, wait) {
            (Some(types), Some(limit), Some(wait)) if v.0.is_empty() => Ok(FeedRequest {
                after,
                types,
                limit,
                wait: Duration::from_secs(u64::from(wait)),
            }),
            _ => Err(v),
        }
    }
}

/// `value` when it lies in `min..=max`, else a violation naming `field`; `default` when absent.
fn within(
    field: &str,
    value: Option<i64>,
    min: u32,
    max: u32,
    default: u32,
) -> Result<u32, FieldViolation> {
    match value {
        None => Ok(default),
        Some(value) => u32::try_from(value)
            .ok()
            .filter(|value| (min..=max).contains(value))
            .ok_or_else(|| {
                FieldViolation::new(field, "range", format!("must be between {min} and {max}"))
            }),
    }
}

/// What the log and metrics record for a held request whose client hung up (nginx's "client
/// closed request"); no one receives it.
fn client_gone() -> HttpResponse {
    HttpResponse::new(StatusCode::from_u16(499).unwrap_or(StatusCode::NO_CONTENT))
}

/// The events of a game the caller may read now, in commit order, from a cursor. Scopes
/// filter silently: deck events need `decks:read`, guide events `sideboards:read`.
#[utoipa::path(
    tag = "events",
    params(GamePath, FeedParams),
    responses(
        (status = 200, body = EventPageDto),
        (status = 400, description = "A malformed cursor, an unknown type, or `limit` or `wait` out of range", body = ErrorEnvelope),
        (status = 401, description = "No credentials", body = ErrorEnvelope),
        (status = 403, description = "A partner outside its game scopes", body = ErrorEnvelope),
        (status = 410, description = "The cursor points before the oldest retained event", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = []))
)]
#[get("/games/{game}/events")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn list_events(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        database,
        ..
    }: PathAccess<ReadEvents, GamePath, ReplicaMayServe>,
    params: crate::query::Query<FeedParams>,
    http: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let request = params.into_inner().into_request()?;
    let held = !request.wait.is_zero();
    let feed = state
        .services_on(database)
        .events
        .feed(&principal, &game.slug, request);
    // A held request whose client hangs up ends at once: its wait's place is given back and
    // nothing more is read for it. One that is not held just answers.
    let page = match http.conn_data::<PeerGone>().filter(|_| held) {
        Some(peer) => tokio::select! {
            page = feed => page?,
            () = peer.gone() => return Ok(client_gone()),
        },
        None => feed.await?,
    };
    Ok(HttpResponse::Ok().json(EventPageDto {
        data: page.events.iter().map(|event| event.to_json()).collect(),
        next_cursor: page.next.encode(),
        has_more: page.has_more,
    }))
}
