//! A deck's strategy guide: read, create or replace (extension), delete.

pub(crate) mod delete;
pub(crate) mod put;
pub(crate) mod read;

use actix_web::http::header::EntityTag;
use deckhand_domain::decks::{DeckGuide, GuideView};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "01a1fd81-0000-7000-8000-000000000003", "deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6",
    "content_type": "markdown", "content": "# Game plan\n\nCurve out, then race.", "is_premium": false,
    "created_at": "2026-11-21T09:47:00.000001Z", "updated_at": "2026-11-21T09:47:00.000001Z", "is_truncated": false}))]
pub struct GuideDto {
    id: Uuid,
    deck_id: Uuid,
    /// `markdown` or `text`.
    content_type: String,
    /// The guide; for a premium guide read without content access, its first 200 characters.
    content: String,
    is_premium: bool,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    updated_at: OffsetDateTime,
    /// True when `content` is a preview.
    is_truncated: bool,
}

impl From<GuideView> for GuideDto {
    fn from(view: GuideView) -> Self {
        let GuideView {
            guide,
            is_truncated,
        } = view;
        let DeckGuide {
            id,
            deck_id,
            content_type,
            content,
            is_premium,
            created_at,
            updated_at,
        } = guide;
        Self {
            id,
            deck_id: deck_id.0,
            content_type: content_type.as_str().to_owned(),
            content,
            is_premium,
            created_at,
            updated_at,
            is_truncated,
        }
    }
}

/// The guide's tag: when it was last written, and whether this answer is the preview (the
/// owner and a non-premium reader see different bodies of one guide); `"none"` for `null`.
fn guide_etag(view: Option<&GuideView>) -> EntityTag {
    EntityTag::new_strong(view.map_or_else(
        || "none".to_owned(),
        |view| {
            let written = view.guide.updated_at.unix_timestamp_nanos();
            let part = if view.is_truncated { "preview" } else { "full" };
            format!("{written}-{part}")
        },
    ))
}
