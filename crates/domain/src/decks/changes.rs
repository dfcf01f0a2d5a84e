//! What a create or PATCH asks for, and the bounds every field must keep.

use std::collections::BTreeSet;

use crate::catalog::CardIdentifier;
use crate::patch::Patch;
use crate::validation::{self, FieldViolation, Violations, bounded_text, optional_text};

use super::card_line::{CardLineInput, MAX_CARD_LINES, check_quantity};
use super::model::{FeaturedSlot, Visibility};

/// A featured card as a client sends it, before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeaturedInput {
    pub slot: FeaturedSlot,
    pub foil: bool,
    pub identifier: CardIdentifier,
}

/// The fields of a create or PATCH, as the client sent them: bounds are checked by
/// [`DeckChanges::check`]. `None` or [`Patch::Keep`] leaves a field as it is (on create: its
/// default); [`Patch::Clear`] clears a nullable field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeckChanges {
    pub name: Option<String>,
    pub notes: Option<String>,
    pub visibility: Option<Vec<String>>,
    pub format: Patch<String>,
    pub youtube_url: Patch<String>,
    pub thumbnail: Patch<String>,
    pub legal: Option<bool>,
    pub archetype: Patch<String>,
    pub source_provider: Option<String>,
    pub source_external_id: Patch<String>,
    pub source_external_version: Patch<String>,
    pub source_external_url: Patch<String>,
    pub cards: Option<Vec<CardLineInput>>,
    /// `Clear` returns to featured cards derived from the commander and companion.
    pub featured: Patch<Vec<FeaturedInput>>,
    /// PATCH only.
    pub is_archived: Option<bool>,
}

/// Operator-set rules for deck writes and views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeckPolicy {
    /// `source_provider` codes accepted besides `manual`.
    pub source_providers: BTreeSet<String>,
    /// A visitor's repeat views inside this window do not count.
    pub pageview_window: time::Duration,
}

/// The deck sites accepted as `source_provider` unless the operator says otherwise
/// (`DECKHAND_SOURCE_PROVIDERS`): twelve popular ones.
pub const DEFAULT_SOURCE_PROVIDERS: &str = "archidekt,moxfield,mtggoldfish,tappedout,deckstats,aetherhub,mtgtop8,scryfall,edhrec,tcgplayer,cardkingdom,untapped";

impl Default for DeckPolicy {
    fn default() -> Self {
        Self {
            source_providers: DEFAULT_SOURCE_PROVIDERS
                .split(',')
                .map(str::to_owned)
                .collect(),
            pageview_window: time::Duration::hours(1),
        }
    }
}

/// Field values that passed their bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CheckedChanges {
    pub name: Option<String>,
    pub notes: Option<String>,
    pub visibility: Option<Visibility>,
    /// The format as sent (a slug or an id), within its bounds; [`Self::format`] is the id it
    /// names once the game's formats have been asked.
    pub format_reference: Patch<String>,
    pub format: Patch<uuid::Uuid>,
    pub youtube_url: Patch<String>,
    pub thumbnail: Patch<String>,
    pub legal: Option<bool>,
    pub archetype: Patch<String>,
    pub source_provider: Option<String>,
    pub source_external_id: Patch<String>,
    pub source_external_version: Patch<String>,
    pub source_external_url: Patch<String>,
    pub is_archived: Option<bool>,
}

impl DeckChanges {
    /// Checks every bound of the spec and contract at once. `creating` requires a name and
    /// refuses `is_archived`.
    pub(crate) fn check(
        &self,
        policy: &DeckPolicy,
        creating: bool,
    ) -> Result<CheckedChanges, Violations> {
        self.check_as(policy, Some(creating))
    }

    /// The bounds of the fields sent, with no rule on which must be: a fork's name and
    /// visibility, each optional.
    pub(crate) fn check_bounds(&self, policy: &DeckPolicy) -> Result<CheckedChanges, Violations> {
        self.check_as(policy, None)
    }

    /// `creating`: `Some(true)` for a create, `Some(false)` for a PATCH, `None` for neither.
    fn check_as(
        &self,
        policy: &DeckPolicy,
        creating: Option<bool>,
    ) -> Result<CheckedChanges, Violations> {
        let mut v = Violations::default();
        if creating == Some(true) {
            v.check_create("deck", self.name.is_some(), self.is_archived.is_some());
        }
        let name = v.check_sent(self.name.as_deref(), |name| {
            validation::name("name", name, 255)
        });
        let notes = v.check_sent(self.notes.as_deref(), |notes| {
            bounded_text("notes", notes, 0, 50_000)
        });
        let visibility = v.check_sent(self.visibility.as_deref(), |levels| {
            Visibility::parse_levels("visibility", levels)
        });
        let format_reference = v
            .check(self.format.as_ref().try_map(|reference| {
                let reference = reference.trim();
                if reference.is_empty() || reference.chars().count() > 64 {
                    Err(FieldViolation::new(
                        "format",
                        "invalid",
                        "must be a format's slug or id",
                    ))
                } else {
                    Ok(reference.to_owned())
                }
            }))
            .unwrap_or_default();
        let provider = self.source_provider.as_deref().and_then(|provider| {
            let known = provider == "manual" || policy.source_providers.contains(provider);
            if known {
                Some(provider.to_owned())
            } else {
                let mut known: Vec<&str> = vec!["manual"];
                known.extend(policy.source_providers.iter().map(String::as_str));
                v.push(FieldViolation::new(
                    "source_provider",
                    "invalid",
                    format!("must be one of {}", known.join(", ")),
                ));
                None
            }
        });
        let checked = CheckedChanges {
            name,
            notes,
            visibility,
            format: Patch::Keep,
            format_reference,
            youtube_url: optional_text(&mut v, "youtube_url", &self.youtube_url, 500),
            thumbnail: optional_text(&mut v, "thumbnail", &self.thumbnail, 255),
            legal: self.legal,
            archetype: optional_text(&mut v, "archetype", &self.archetype, 100),
            source_provider: provider,
            source_external_id: optional_text(
                &mut v,
                "source_external_id",
                &self.source_external_id,
                128,
            ),
            source_external_version: optional_text(
                &mut v,
                "source_external_version",
                &self.source_external_version,
                32,
            ),
            // The spec gives no bound; 2048 keeps a URL a URL.
            source_external_url: optional_text(
                &mut v,
                "source_external_url",
                &self.source_external_url,
                2048,
            ),
            is_archived: self.is_archived,
        };
        if let Some(cards) = &self.cards {
            if cards.len() > MAX_CARD_LINES {
                v.push(FieldViolation::new(
                    "cards",
                    "too_many",
                    format!("at most {MAX_CARD_LINES} card lines"),
                ));
            }
            for (index, line) in cards.iter().enumerate() {
                v.check(check_quantity(
                    format!("cards[{index}].quantity"),
                    line.quantity,
                ));
            }
        }
        v.check_patch_not_empty(creating == Some(false) && *self == DeckChanges::default());
        v.into_result(checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> DeckPolicy {
        DeckPolicy {
            source_providers: ["moxfield".to_owned()].into(),
            ..DeckPolicy::default()
        }
    }

    fn codes(result: Result<CheckedChanges, Violations>) -> Vec<(String, &'static str)> {
        result.unwrap_err().codes()
    }

    #[test]
    fn creating_needs_a_name_and_every_bound_is_reported() {
        let changes = DeckChanges {
            notes: Some("x".repeat(50_001)),
            youtube_url: Patch::Set("y".repeat(501)),
            thumbnail: Patch::Set("t".repeat(256)),
            source_external_id: Patch::Set("i".repeat(129)),
            source_external_version: Patch::Set("v".repeat(33)),
            source_provider: Some("elsewhere".into()),
            visibility: Some(vec![]),
            format: Patch::Set(" ".into()),
            ..DeckChanges::default()
        };
        assert_eq!(
            codes(changes.check(&policy(), true)),
            [
                ("name".to_owned(), "required"),
                ("notes".to_owned(), "length"),
                ("visibility".to_owned(), "invalid"),
                ("format".to_owned(), "invalid"),
                ("source_provider".to_owned(), "invalid"),
                ("youtube_url".to_owned(), "length"),
                ("thumbnail".to_owned(), "length"),
                ("source_external_id".to_owned(), "length"),
                ("source_external_version".to_owned(), "length"),
            ]
        );
    }

    #[test]
    fn names_are_1_to_255_characters_and_not_blank() {
        let named = |name: &str| DeckChanges {
            name: Some(name.into()),
            ..DeckChanges::default()
        };
        assert!(named(&"é".repeat(255)).check(&policy(), true).is_ok());
        assert_eq!(
            codes(named(&"a".repeat(256)).check(&policy(), true)),
            [("name".to_owned(), "length")]
        );
        assert_eq!(
            codes(named("").check(&policy(), true)),
            [("name".to_owned(), "length")]
        );
        assert_eq!(
            codes(named("   ").check(&policy(), true)),
            [("name".to_owned(), "blank")]
        );
    }

    #[test]
    fn patches_need_a_field_and_quantities_stay_in_range() {
        assert_eq!(
            codes(DeckChanges::default().check(&policy(), false)),
            [("body".to_owned(), "empty")]
        );
        let line = |quantity| CardLineInput {
            section: "mainboard".into(),
            quantity,
            foil: false,
            identifier: CardIdentifier::default(),
        };
        let changes = DeckChanges {
            cards: Some(vec![line(1), line(0), line(1000)]),
            ..DeckChanges::default()
        };
        assert_eq!(
            codes(changes.check(&policy(), false)),
            [
                ("cards[1].quantity".to_owned(), "range"),
                ("cards[2].quantity".to_owned(), "range")
            ]
        );
    }

    #[test]
    fn providers_are_manual_or_configured() {
        let provider = |code: &str| DeckChanges {
            name: Some("x".into()),
            source_provider: Some(code.into()),
            ..DeckChanges::default()
        };
        assert!(provider("manual").check(&policy(), true).is_ok());
        assert!(provider("moxfield").check(&policy(), true).is_ok());
        assert!(provider("Moxfield").check(&policy(), true).is_err());
    }
}
