//! The feed's page. Events are rendered by `Event::to_json` in the domain, the one place their
//! JSON form is written (webhook bodies use it too); [`EventDto`] describes that form for the
//! OpenAPI document, and a test holds the two together.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// One committed change (contract "Events").
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct EventDto {
    #[schema(format = Uuid)]
    id: String,
    /// Unique, positive, ascending in commit order.
    sequence: i64,
    /// `deck.created`, `deck.updated`, `deck.rolled_back`, `deck.strategy_guide.updated`,
    /// `deck.strategy_guide.deleted`, `sideboard_guide.created`, `sideboard_guide.updated`,
    /// `sideboard_guide.deck_attached`, `sideboard_guide.deck_detached`,
    /// `sideboard_guide.matchup_created`, `sideboard_guide.matchup_updated`,
    /// `sideboard_guide.matchup_deleted`, `catalog.imported`.
    #[serde(rename = "type")]
    event_type: String,
    game: String,
    #[schema(format = DateTime)]
    occurred_at: String,
    subject: EventSubjectDto,
    actor: EventActorDto,
    /// Thin: ids and what changed, never content (see the contract for each type).
    #[schema(value_type = Object)]
    data: Value,
}

#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct EventSubjectDto {
    /// `deck`, `sideboard_guide` or `catalog`.
    kind: String,
    /// The deck or guide; null for the catalog.
    #[schema(format = Uuid)]
    id: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct EventActorDto {
    user_id: Option<String>,
    partner: Option<String>,
}

/// A page of the feed.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventPageDto {
    /// Ascending `sequence`.
    #[schema(value_type = Vec<EventDto>)]
    pub(crate) data: Vec<Value>,
    /// Always present: pass it as `after` to read on (the same cursor when nothing is new).
    pub(crate) next_cursor: String,
    pub(crate) has_more: bool,
}
