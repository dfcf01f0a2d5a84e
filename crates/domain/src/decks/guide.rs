//! A deck's strategy guide and its premium preview.

use time::OffsetDateTime;
use uuid::Uuid;

use crate::validation::{FieldViolation, Violations, bounded_text};

use super::model::DeckId;

/// The most characters a guide may hold.
pub const MAX_GUIDE_CHARACTERS: usize = 200_000;
/// What a caller without content access sees of a premium guide.
pub const PREVIEW_CHARACTERS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentType {
    Markdown,
    Text,
}

impl ContentType {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "markdown" => Some(Self::Markdown),
            "text" => Some(Self::Text),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckGuide {
    pub id: Uuid,
    pub deck_id: DeckId,
    pub content_type: ContentType,
    pub content: String,
    pub is_premium: bool,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// A guide as one caller may read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuideView {
    pub guide: DeckGuide,
    /// The content was cut to the preview.
    pub is_truncated: bool,
}

impl DeckGuide {
    /// The whole guide for callers with content access, else (for a premium guide) its first
    /// [`PREVIEW_CHARACTERS`] Unicode scalar values.
    pub fn view(mut self, has_content_access: bool) -> GuideView {
        let is_truncated = self.is_premium
            && !has_content_access
            && self.content.chars().count() > PREVIEW_CHARACTERS;
        if is_truncated {
            self.content = self.content.chars().take(PREVIEW_CHARACTERS).collect();
        }
        GuideView {
            guide: self,
            is_truncated,
        }
    }
}

/// A guide as the owner writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuideInput {
    pub content_type: String,
    pub content: String,
    pub is_premium: bool,
}

impl GuideInput {
    pub(crate) fn check(&self) -> Result<(ContentType, String), Violations> {
        let mut v = Violations::default();
        let content_type = ContentType::parse(&self.content_type);
        if content_type.is_none() {
            v.push(FieldViolation::new(
                "content_type",
                "invalid",
                "must be markdown or text",
            ));
        }
        let content = v.check(bounded_text(
            "content",
            &self.content,
            0,
            MAX_GUIDE_CHARACTERS,
        ));
        match (content_type, content) {
            (Some(content_type), Some(content)) if v.0.is_empty() => Ok((content_type, content)),
            _ => Err(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guide(content: &str, is_premium: bool) -> DeckGuide {
        DeckGuide {
            id: Uuid::nil(),
            deck_id: DeckId(Uuid::nil()),
            content_type: ContentType::Markdown,
            content: content.into(),
            is_premium,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn premium_guides_preview_200_scalar_values_without_access() {
        let long = "é".repeat(250);
        let view = guide(&long, true).view(false);
        assert!(view.is_truncated);
        assert_eq!(view.guide.content.chars().count(), 200);
        assert!(!guide(&long, true).view(true).is_truncated);
        assert!(!guide(&long, false).view(false).is_truncated);
        let short = guide(&"x".repeat(200), true).view(false);
        assert!(!short.is_truncated, "nothing was cut");
    }

    #[test]
    fn input_is_checked_whole() {
        let input = |content_type: &str, content: String| GuideInput {
            content_type: content_type.into(),
            content,
            is_premium: false,
        };
        assert!(input("markdown", "# Plan".into()).check().is_ok());
        let errors = input("html", "x".repeat(200_001)).check().unwrap_err();
        let fields: Vec<_> = errors.0.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(fields, ["content_type", "content"]);
    }
}
