//! Webhook endpoints and their deliveries, and the rules of a delivery's life: which events an
//! endpoint wants, what an attempt's outcome makes of a delivery, when an endpoint is disabled.

use std::collections::BTreeSet;
use std::time::Duration;

use time::OffsetDateTime;
use uuid::Uuid;

use super::schedule::RetrySchedule;
use super::url::WebhookUrl;
use crate::catalog::is_game_slug;
use crate::events::{EventId, EventType, UnknownEventType};
use crate::identity::GameScopes;

/// At most this many endpoints per partner.
pub const MAX_ENDPOINTS_PER_PARTNER: usize = 16;
/// An endpoint whose last this many deliveries all failed is disabled.
pub const DISABLE_AFTER_FAILURES: i32 = 50;
/// How long the previous secret still signs after a rotation.
pub const PREVIOUS_SECRET_LIFETIME: time::Duration = time::Duration::hours(24);
/// At most this much of a receiver's response body is kept.
pub const MAX_RESPONSE_CAPTURE: usize = 1024;
/// Longest description accepted.
pub const MAX_DESCRIPTION_LEN: usize = 500;
/// `retries_used` of a delivery that had ended and is given one more attempt by hand: its
/// schedule is over, so a failure ends it again.
pub const ONE_MORE_ATTEMPT: i32 = i32::MAX;
/// Deliveries older than this are pruned.
pub const DELIVERY_RETENTION: time::Duration = time::Duration::days(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WebhookId(pub Uuid);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeliveryId(pub Uuid);

/// The event types an endpoint wants: every one, or those named exactly or by a `prefix.*`
/// (the feed's `types` syntax). Kept as written, so the partner reads back what it sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeSelection(Option<BTreeSet<String>>);

impl TypeSelection {
    pub fn all() -> Self {
        Self(None)
    }

    /// Entries as the feed's `types` takes them, or `*` for every type. `webhook.ping` is not
    /// selectable: every endpoint gets the pings it asks for.
    pub fn parse(entries: &[String]) -> Result<Self, UnknownEventType> {
        if entries.iter().any(|entry| entry == "*") {
            return Ok(Self::all());
        }
        for entry in entries {
            crate::events::TypeFilter::parse(entry)?;
            if entry.trim().is_empty() || entry.contains(',') {
                return Err(UnknownEventType(entry.clone()));
            }
        }
        let names: BTreeSet<String> = entries.iter().cloned().collect();
        Ok(if names.is_empty() {
            Self::all()
        } else {
            Self(Some(names))
        })
    }

    pub fn admits(&self, kind: EventType) -> bool {
        match &self.0 {
            None => kind != EventType::WebhookPing,
            Some(entries) => entries.iter().any(|entry| match entry.strip_suffix('*') {
                Some(prefix) => kind.as_str().starts_with(prefix),
                None => kind.as_str() == entry,
            }),
        }
    }

    /// As shown and stored: `["*"]` for every type.
    pub fn names(&self) -> Vec<String> {
        match &self.0 {
            None => vec!["*".to_owned()],
            Some(entries) => entries.iter().cloned().collect(),
        }
    }
}

/// The games an endpoint wants: `*` (whatever its partner may act on) or slugs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSelection(pub GameScopes);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidGames {
    #[error("games are `*` or game slugs")]
    Malformed,
    #[error("the partner may not act on game {0:?}")]
    OutsideScopes(String),
}

impl GameSelection {
    /// Slugs (or `*`) that the partner's game scopes allow; none means the partner's scopes.
    pub fn parse(entries: &[String], partner: &GameScopes) -> Result<Self, InvalidGames> {
        if entries.is_empty() {
            return Ok(Self(partner.clone()));
        }
        if entries.iter().any(|entry| entry == "*") {
            return if entries.len() == 1 && *partner == GameScopes::All {
                Ok(Self(GameScopes::All))
            } else if entries.len() == 1 {
                Ok(Self(partner.clone()))
            } else {
                Err(InvalidGames::Malformed)
            };
        }
        let mut games = BTreeSet::new();
        for entry in entries {
            if !is_game_slug(entry) {
                return Err(InvalidGames::Malformed);
            }
            if !partner.allows(entry) {
                return Err(InvalidGames::OutsideScopes(entry.clone()));
            }
            games.insert(entry.clone());
        }
        Ok(Self(GameScopes::Only(games)))
    }

    pub fn admits(&self, game: &str) -> bool {
        self.0.allows(game)
    }

    pub fn names(&self) -> Vec<String> {
        self.0.names()
    }
}

/// Why an endpoint was disabled other than by its partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisabledReason {
    /// Its last [`DISABLE_AFTER_FAILURES`] deliveries failed; its partner may enable it again.
    Failing,
    /// An operator disabled it (`deckhand admin webhook disable`): nothing reaches it, pings
    /// included, and its partner cannot enable it again.
    Operator,
}

impl DisabledReason {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Failing => "failing",
            Self::Operator => "operator",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Failing, Self::Operator]
            .into_iter()
            .find(|reason| reason.as_str() == text)
    }
}

/// An endpoint as stored. Its secrets are sealed (`deckhand_auth::seal`, the endpoint id as
/// associated data), never plain.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub id: WebhookId,
    pub partner: String,
    pub url: String,
    pub types: TypeSelection,
    pub games: GameSelection,
    pub description: Option<String>,
    pub enabled: bool,
    pub disabled_reason: Option<DisabledReason>,
    /// Deliveries that ended `failed` since the last that succeeded.
    pub consecutive_failures: i32,
    pub sealed_secret: Vec<u8>,
    /// The secret before the last rotation, and until when it still signs.
    pub previous_secret: Option<(Vec<u8>, OffsetDateTime)>,
    pub created_at: OffsetDateTime,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("id", &self.id)
            .field("partner", &self.partner)
            .field("url", &self.url)
            .field("types", &self.types)
            .field("games", &self.games)
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Whether an event of `kind` in `game` is fanned out to this endpoint (whether its
    /// partner may read it is decided at delivery time).
    pub fn wants(&self, kind: EventType, game: &str) -> bool {
        self.enabled && self.types.admits(kind) && self.games.admits(game)
    }
}

/// A new endpoint, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEndpoint {
    pub url: WebhookUrl,
    pub types: TypeSelection,
    pub games: GameSelection,
    pub description: Option<String>,
}

/// A PATCH of an endpoint, validated; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EndpointChanges {
    pub url: Option<WebhookUrl>,
    pub types: Option<TypeSelection>,
    pub games: Option<GameSelection>,
    pub description: Option<Option<String>>,
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    Pending,
    Succeeded,
    Failed,
}

impl DeliveryStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pending" => Some(Self::Pending),
            "succeeded" => Some(Self::Succeeded),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// One event on its way to one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: DeliveryId,
    pub endpoint: WebhookId,
    pub event_id: EventId,
    pub event_type: EventType,
    /// The event's sequence; `None` for pings, which are not in the feed.
    pub sequence: Option<i64>,
    pub game: String,
    pub subject_id: Option<Uuid>,
    /// The body every attempt sends: the event's JSON, fixed when the delivery is made.
    pub body: String,
    /// Attempts made so far.
    pub attempt: i32,
    /// How many delays of the retry schedule have been used.
    pub retries_used: i32,
    pub status: DeliveryStatus,
    pub response_status: Option<i32>,
    pub duration_ms: Option<i64>,
    pub error: Option<String>,
    pub attempted_at: Option<OffsetDateTime>,
    pub next_attempt_at: Option<OffsetDateTime>,
    pub created_at: OffsetDateTime,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The receiver answered (any status).
    Answered {
        status: u16,
        /// At most [`MAX_RESPONSE_CAPTURE`] bytes.
        body: String,
        duration: Duration,
    },
    /// No answer: refused address, connection failure, timeout, TLS; the reason, without
    /// secrets.
    NoAnswer { error: String, duration: Duration },
}

impl AttemptOutcome {
    pub fn succeeded(&self) -> bool {
        matches!(self, Self::Answered { status, .. } if (200..300).contains(status))
    }
}

/// What an attempt changes on its delivery (and, through `ended_failed`, its endpoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptRecord {
    pub delivery: DeliveryId,
    /// The attempt number this record is for (the delivery's `attempt` before it, plus one).
    pub attempt: i32,
    pub retries_used: i32,
    pub status: DeliveryStatus,
    pub response_status: Option<i32>,
    pub response_body: Option<String>,
    pub duration_ms: i64,
    pub error: Option<String>,
    pub attempted_at: OffsetDateTime,
    pub next_attempt_at: Option<OffsetDateTime>,
}

impl AttemptRecord {
    /// The state machine of a delivery: a 2xx succeeds; anything else is tried again after
    /// the next delay of the schedule, or ends `failed` when the schedule is over. `jitter` is
    /// in [-1, 1].
    pub fn decide(
        delivery: &Delivery,
        outcome: &AttemptOutcome,
        at: OffsetDateTime,
        schedule: &RetrySchedule,
        jitter: f64,
    ) -> Self {
        let (response_status, response_body, duration, error) = match outcome {
            AttemptOutcome::Answered {
                status,
                body,
                duration,
            } => {
                let error = (!outcome.succeeded())
                    .then(|| format!("the receiver answered with status {status}"));
                (
                    Some(i32::from(*status)),
                    Some(body.clone()),
                    *duration,
                    error,
                )
            }
            AttemptOutcome::NoAnswer { error, duration } => {
                (None, None, *duration, Some(error.clone()))
            }
        };
        let mut record = Self {
            delivery: delivery.id,
            attempt: delivery.attempt + 1,
            retries_used: delivery.retries_used,
            status: DeliveryStatus::Succeeded,
            response_status,
            response_body,
            duration_ms: i64::try_from(duration.as_millis()).unwrap_or(i64::MAX),
            error,
            attempted_at: at,
            next_attempt_at: None,
        };
        if !outcome.succeeded() {
            let step = usize::try_from(delivery.retries_used).unwrap_or(usize::MAX);
            match schedule.delay(step, jitter) {
                Some(delay) => {
                    record.status = DeliveryStatus::Pending;
                    record.retries_used += 1;
                    record.next_attempt_at = Some(crate::time::truncate_to_micros(at + delay));
                }
                None => record.status = DeliveryStatus::Failed,
            }
        }
        record
    }

    /// Whether this attempt ended its delivery as failed (one more failure in a row for the
    /// endpoint).
    pub fn ended_failed(&self) -> bool {
        self.status == DeliveryStatus::Failed
    }
}

/// What attempts decide about an endpoint: whether it is enabled, why not, and how many of its
/// deliveries failed in a row. Stores keep it and change it only through [`Self::after`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointHealth {
    pub enabled: bool,
    pub disabled_reason: Option<DisabledReason>,
    pub consecutive_failures: i32,
}

impl EndpointHealth {
    /// The endpoint after an attempt: a success clears the failures in a row, a delivery that
    /// ended failed adds one, and the [`DISABLE_AFTER_FAILURES`]th in a row disables an
    /// enabled endpoint; an attempt to be retried changes nothing.
    #[must_use]
    pub fn after(self, record: &AttemptRecord) -> Self {
        match record.status {
            DeliveryStatus::Succeeded => Self {
                consecutive_failures: 0,
                ..self
            },
            DeliveryStatus::Pending => self,
            DeliveryStatus::Failed => {
                let consecutive_failures = self.consecutive_failures.saturating_add(1);
                if self.enabled && consecutive_failures >= DISABLE_AFTER_FAILURES {
                    Self {
                        enabled: false,
                        disabled_reason: Some(DisabledReason::Failing),
                        consecutive_failures,
                    }
                } else {
                    Self {
                        consecutive_failures,
                        ..self
                    }
                }
            }
        }
    }
}

impl Endpoint {
    pub fn health(&self) -> EndpointHealth {
        EndpointHealth {
            enabled: self.enabled,
            disabled_reason: self.disabled_reason,
            consecutive_failures: self.consecutive_failures,
        }
    }

    pub fn set_health(&mut self, health: EndpointHealth) {
        self.enabled = health.enabled;
        self.disabled_reason = health.disabled_reason;
        self.consecutive_failures = health.consecutive_failures;
    }
}

/// Cuts a response body to what is kept, on a character boundary.
pub fn capture(body: &[u8]) -> String {
    let cut = &body[..body.len().min(MAX_RESPONSE_CAPTURE)];
    let text = String::from_utf8_lossy(cut);
    let mut text = text.into_owned();
    while text.len() > MAX_RESPONSE_CAPTURE {
        text.pop();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn delivery(attempt: i32, retries_used: i32) -> Delivery {
        Delivery {
            id: DeliveryId(Uuid::from_u128(1)),
            endpoint: WebhookId(Uuid::from_u128(2)),
            event_id: EventId(Uuid::from_u128(3)),
            event_type: EventType::DeckCreated,
            sequence: Some(7),
            game: "mtg".into(),
            subject_id: Some(Uuid::from_u128(4)),
            body: "{}".into(),
            attempt,
            retries_used,
            status: DeliveryStatus::Pending,
            response_status: None,
            duration_ms: None,
            error: None,
            attempted_at: None,
            next_attempt_at: None,
            created_at: datetime!(2026-11-26 00:00 UTC),
        }
    }

    fn answered(status: u16) -> AttemptOutcome {
        AttemptOutcome::Answered {
            status,
            body: "ok".into(),
            duration: Duration::from_millis(12),
        }
    }

    const AT: OffsetDateTime = datetime!(2026-11-26 12:00 UTC);

    #[test]
    fn a_2xx_succeeds() {
        let schedule = RetrySchedule::default();
        for status in [200, 201, 204, 299] {
            let record =
                AttemptRecord::decide(&delivery(0, 0), &answered(status), AT, &schedule, 0.0);
            assert_eq!(record.status, DeliveryStatus::Succeeded);
            assert_eq!(record.attempt, 1);
            assert_eq!(record.response_status, Some(i32::from(status)));
            assert_eq!(record.error, None);
            assert_eq!(record.next_attempt_at, None);
            assert_eq!(record.duration_ms, 12);
        }
    }

    #[test]
    fn anything_else_is_retried_on_the_schedule_then_fails() {
        let schedule = RetrySchedule::default();
        for outcome in [
            answered(500),
            answered(301),
            answered(404),
            answered(100),
            AttemptOutcome::NoAnswer {
                error: "timed out".into(),
                duration: Duration::from_secs(10),
            },
        ] {
            let record = AttemptRecord::decide(&delivery(0, 0), &outcome, AT, &schedule, 0.0);
            assert_eq!(record.status, DeliveryStatus::Pending, "{outcome:?}");
            assert_eq!(
                record.next_attempt_at,
                Some(AT + time::Duration::seconds(5))
            );
            assert_eq!(record.retries_used, 1);
            assert!(record.error.is_some());
        }
        let third = AttemptRecord::decide(&delivery(2, 2), &answered(500), AT, &schedule, 1.0);
        assert_eq!(
            third.next_attempt_at,
            Some(AT + time::Duration::minutes(33))
        );
        let last = AttemptRecord::decide(&delivery(8, 7), &answered(500), AT, &schedule, 0.0);
        assert_eq!(last.status, DeliveryStatus::Failed);
        assert_eq!(last.next_attempt_at, None);
        assert!(last.ended_failed());
    }

    #[test]
    fn fifty_failed_deliveries_in_a_row_disable_an_endpoint() {
        let schedule = RetrySchedule::new(vec![]);
        let failed = AttemptRecord::decide(&delivery(0, 0), &answered(500), AT, &schedule, 0.0);
        let succeeded = AttemptRecord::decide(&delivery(0, 0), &answered(200), AT, &schedule, 0.0);
        let retried = AttemptRecord::decide(
            &delivery(0, 0),
            &answered(500),
            AT,
            &RetrySchedule::default(),
            0.0,
        );
        let enabled = |consecutive_failures| EndpointHealth {
            enabled: true,
            disabled_reason: None,
            consecutive_failures,
        };
        let disabled = EndpointHealth {
            enabled: false,
            disabled_reason: Some(DisabledReason::Failing),
            consecutive_failures: 50,
        };
        assert_eq!(enabled(48).after(&failed), enabled(49));
        assert_eq!(enabled(49).after(&failed), disabled);
        assert_eq!(enabled(49).after(&succeeded), enabled(0));
        assert_eq!(enabled(49).after(&retried), enabled(49));
        // Once disabled, more failures count on and success clears the count, but only a
        // partner's PATCH enables it again.
        let more = disabled.after(&failed);
        assert_eq!(
            (
                more.enabled,
                more.disabled_reason,
                more.consecutive_failures
            ),
            (false, Some(DisabledReason::Failing), 51)
        );
        assert_eq!(
            disabled.after(&succeeded),
            EndpointHealth {
                consecutive_failures: 0,
                ..disabled
            }
        );
        // Disabled by its partner, an endpoint keeps no service reason.
        let paused = EndpointHealth {
            enabled: false,
            ..enabled(60)
        };
        assert_eq!(paused.after(&failed).disabled_reason, None);
    }

    #[test]
    fn type_selections() {
        let all = TypeSelection::parse(&[]).unwrap();
        assert_eq!(all, TypeSelection::all());
        assert_eq!(all.names(), ["*"]);
        assert!(all.admits(EventType::CatalogImported));
        assert!(!all.admits(EventType::WebhookPing));
        let some = TypeSelection::parse(&["deck.*".into(), "catalog.imported".into()]).unwrap();
        assert!(some.admits(EventType::DeckStrategyGuideDeleted));
        assert!(some.admits(EventType::CatalogImported));
        assert!(!some.admits(EventType::GuideCreated));
        assert_eq!(some.names(), ["catalog.imported", "deck.*"]);
        for bad in [
            "deck",
            "nope.*",
            "webhook.ping",
            "",
            "deck.created,deck.updated",
        ] {
            assert!(TypeSelection::parse(&[bad.into()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn game_selections_stay_inside_the_partners_scopes() {
        let scopes = GameScopes::Only(["mtg".to_owned(), "lorcana".to_owned()].into());
        assert_eq!(GameSelection::parse(&[], &scopes).unwrap().0, scopes);
        assert_eq!(
            GameSelection::parse(&["*".into()], &scopes).unwrap().0,
            scopes
        );
        let mtg = GameSelection::parse(&["mtg".into()], &scopes).unwrap();
        assert!(mtg.admits("mtg") && !mtg.admits("lorcana"));
        assert_eq!(
            GameSelection::parse(&["pokemon".into()], &scopes),
            Err(InvalidGames::OutsideScopes("pokemon".into()))
        );
        assert_eq!(
            GameSelection::parse(&["MTG".into()], &scopes),
            Err(InvalidGames::Malformed)
        );
        let every = GameSelection::parse(&["*".into()], &GameScopes::All).unwrap();
        assert!(every.admits("anything"));
        assert_eq!(every.names(), ["*"]);
    }

    #[test]
    fn captures_are_cut_at_one_kibibyte() {
        assert_eq!(capture(b"short"), "short");
        assert_eq!(capture(&[b'a'; 5000]).len(), 1024);
        let accents = "é".repeat(600);
        let kept = capture(accents.as_bytes());
        assert!(kept.len() <= 1024, "{}", kept.len());
    }
}
