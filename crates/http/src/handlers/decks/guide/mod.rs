//! A deck's strategy guide: read, create or replace (extension), delete.

pub(crate) mod delete;
pub(crate) mod put;
pub(crate) mod read;

use deckhand_domain::decks::{DeckGuide, GuideView};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Serialize, ToSchema)]
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
