//! What a guide or matchup create or PATCH asks for, and the bounds every field must keep
//! (contract 4, "Sideboard guides"). Every violation of a request is reported together.

use crate::decks::{Visibility, check_quantity};
use crate::patch::Patch;
use crate::validation::{self, FieldViolation, Violations, bounded_text, name, optional_text};

use super::model::{CardOverride, Difficulty, GuideContent, MatchupContent, OverrideType};

pub const MAX_NAME: usize = 255;
pub const MAX_DESCRIPTION: usize = 500_000;
pub const MAX_NOTES: usize = 500_000;
pub const MAX_TAGS: usize = 50;
pub const MAX_TAG: usize = 50;
pub const MAX_FORMAT: usize = 50;
pub const MAX_THUMBNAIL: usize = 255;
pub const MAX_YOUTUBE_URL: usize = 500;
/// Matchup bounds the contract leaves open (docs/api.md, "Sideboard guides").
pub const MAX_OPPONENT_DECK_NAME: usize = 255;
pub const MAX_OPPONENT_ARCHETYPE: usize = 100;
pub const MAX_MATCHUP_NOTES: usize = 50_000;
pub const MAX_MATCHUPS_PER_REQUEST: usize = 100;
pub const MAX_OVERRIDES: usize = 100;
pub const MAX_CARD_ID: usize = 64;
pub const MAX_SORT_ORDER: i64 = 100_000;

/// The primary or an attached deck as a client names it.
pub(crate) fn deck_id(field: &str, value: &str) -> Result<uuid::Uuid, FieldViolation> {
    validation::uuid(field, value, "must be a deck id (a UUID)")
}

/// The fields of a guide create or PATCH, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuideChanges {
    pub name: Option<String>,
    pub description: Option<String>,
    pub notes: Option<String>,
    pub visibility: Option<Vec<String>>,
    pub tags: Option<Vec<String>>,
    pub format: Patch<String>,
    pub thumbnail: Patch<String>,
    pub youtube_url: Patch<String>,
    pub premium: Option<bool>,
    /// PATCH only.
    pub is_archived: Option<bool>,
}

/// A new guide as sent: its primary deck, its fields and its first matchups.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewGuideInput {
    /// The primary deck: a deck of the caller, in the guide's game.
    pub deck_id: Option<String>,
    pub fields: GuideChanges,
    pub matchups: Vec<MatchupChanges>,
}

/// Guide fields that passed their bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CheckedGuide {
    pub name: Option<String>,
    pub description: Option<String>,
    pub notes: Option<String>,
    pub visibility: Option<Visibility>,
    pub tags: Option<Vec<String>>,
    pub format: Patch<String>,
    pub thumbnail: Patch<String>,
    pub youtube_url: Patch<String>,
    pub premium: Option<bool>,
    pub is_archived: Option<bool>,
}

fn tags(values: &[String], v: &mut Violations) -> Option<Vec<String>> {
    let before = v.0.len();
    if values.len() > MAX_TAGS {
        v.push(FieldViolation::new(
            "tags",
            "too_many",
            format!("at most {MAX_TAGS} tags"),
        ));
    }
    let mut kept: Vec<String> = Vec::new();
    for (index, tag) in values.iter().enumerate() {
        if let Some(tag) = v.check(bounded_text(&format!("tags[{index}]"), tag, 1, MAX_TAG))
            && !kept.contains(&tag)
        {
            // The same tag twice is one tag.
            kept.push(tag);
        }
    }
    (v.0.len() == before).then_some(kept)
}

impl GuideChanges {
    /// Checks every bound at once into `v`.
    fn check_into(&self, v: &mut Violations) -> CheckedGuide {
        CheckedGuide {
            name: v.check_sent(self.name.as_deref(), |value| name("name", value, MAX_NAME)),
            description: v.check_sent(self.description.as_deref(), |value| {
                bounded_text("description", value, 0, MAX_DESCRIPTION)
            }),
            notes: v.check_sent(self.notes.as_deref(), |value| {
                bounded_text("notes", value, 0, MAX_NOTES)
            }),
            visibility: v.check_sent(self.visibility.as_deref(), |levels| {
                Visibility::parse_levels("visibility", levels)
            }),
            tags: self.tags.as_deref().and_then(|values| tags(values, v)),
            format: optional_text(v, "format", &self.format, MAX_FORMAT),
            thumbnail: optional_text(v, "thumbnail", &self.thumbnail, MAX_THUMBNAIL),
            youtube_url: optional_text(v, "youtube_url", &self.youtube_url, MAX_YOUTUBE_URL),
            premium: self.premium,
            is_archived: self.is_archived,
        }
    }

    /// A PATCH: at least one field, every bound checked and reported together.
    pub(crate) fn check_patch(&self) -> Result<CheckedGuide, Violations> {
        let mut v = Violations::default();
        v.check_patch_not_empty(*self == Self::default());
        let checked = self.check_into(&mut v);
        v.into_result(checked)
    }
}

impl CheckedGuide {
    /// `content` with the set fields replaced.
    pub(crate) fn apply(self, content: GuideContent) -> GuideContent {
        GuideContent {
            name: self.name.unwrap_or(content.name),
            description: self.description.unwrap_or(content.description),
            notes: self.notes.unwrap_or(content.notes),
            visibility: self.visibility.unwrap_or(content.visibility),
            tags: self.tags.unwrap_or(content.tags),
            format: self.format.applied_to(content.format),
            thumbnail: self.thumbnail.applied_to(content.thumbnail),
            youtube_url: self.youtube_url.applied_to(content.youtube_url),
            premium: self.premium.unwrap_or(content.premium),
        }
    }
}

/// A new guide that passed its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckedNewGuide {
    pub deck_id: uuid::Uuid,
    pub content: GuideContent,
    pub matchups: Vec<MatchupContent>,
}

impl NewGuideInput {
    /// Checks the whole create request: a name and a primary deck are required, a new guide
    /// cannot be archived, and every matchup is checked with its position in the field names.
    pub(crate) fn check(&self) -> Result<CheckedNewGuide, Violations> {
        let mut v = Violations::default();
        v.check_create(
            "guide",
            self.fields.name.is_some(),
            self.fields.is_archived.is_some(),
        );
        let deck_id = match self.deck_id.as_deref() {
            None => {
                v.push(FieldViolation::new(
                    "deck_id",
                    "required",
                    "a guide needs its primary deck",
                ));
                None
            }
            Some(id) => v.check(deck_id("deck_id", id)),
        };
        let checked = self.fields.check_into(&mut v);
        if self.matchups.len() > MAX_MATCHUPS_PER_REQUEST {
            v.push(FieldViolation::new(
                "matchups",
                "too_many",
                format!("at most {MAX_MATCHUPS_PER_REQUEST} matchups in one request"),
            ));
        }
        let matchups: Vec<MatchupContent> = self
            .matchups
            .iter()
            .enumerate()
            .filter_map(|(index, matchup)| {
                matchup.check_new_into(&format!("matchups[{index}]."), &mut v)
            })
            .collect();
        let content = checked.apply(GuideContent {
            name: String::new(),
            description: String::new(),
            notes: String::new(),
            visibility: Visibility::Private,
            tags: Vec::new(),
            format: None,
            thumbnail: None,
            youtube_url: None,
            premium: false,
        });
        match deck_id {
            Some(deck_id) if v.0.is_empty() => Ok(CheckedNewGuide {
                deck_id,
                content,
                matchups,
            }),
            _ => Err(v),
        }
    }
}

/// A card override as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverrideInput {
    pub special_card_type: String,
    pub card_id: String,
    pub card_name: String,
    /// Default 1.
    pub quantity: Option<i64>,
    /// Default: the position in the request.
    pub sort_order: Option<i64>,
}

/// The fields of a matchup create or PATCH, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchupChanges {
    pub opponent_deck_name: Option<String>,
    pub opponent_archetype: Patch<String>,
    pub difficulty: Option<String>,
    pub notes: Option<String>,
    pub play_notes: Option<String>,
    pub draw_notes: Option<String>,
    pub sort_order: Option<i64>,
    pub thumbnail: Patch<String>,
    pub is_featured: Option<bool>,
    pub special_card_overrides: Option<Vec<OverrideInput>>,
}

/// Matchup fields that passed their bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CheckedMatchup {
    pub opponent_deck_name: Option<String>,
    pub opponent_archetype: Patch<String>,
    pub difficulty: Option<Difficulty>,
    pub notes: Option<String>,
    pub play_notes: Option<String>,
    pub draw_notes: Option<String>,
    pub sort_order: Option<i32>,
    pub thumbnail: Patch<String>,
    pub is_featured: Option<bool>,
    pub special_card_overrides: Option<Vec<CardOverride>>,
}

fn sort_order(field: String) -> impl Fn(&i64) -> Result<i32, FieldViolation> {
    move |value| {
        (0..=MAX_SORT_ORDER)
            .contains(value)
            .then(|| i32::try_from(*value).ok())
            .flatten()
            .ok_or_else(|| {
                FieldViolation::new(
                    field.clone(),
                    "range",
                    format!("must be 0 to {MAX_SORT_ORDER}"),
                )
            })
    }
}

fn overrides(
    prefix: &str,
    inputs: &[OverrideInput],
    v: &mut Violations,
) -> Option<Vec<CardOverride>> {
    let before = v.0.len();
    let field = format!("{prefix}special_card_overrides");
    if inputs.len() > MAX_OVERRIDES {
        v.push(FieldViolation::new(
            field.clone(),
            "too_many",
            format!("at most {MAX_OVERRIDES} overrides"),
        ));
    }
    let mut checked = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        let at = |name: &str| format!("{field}[{index}].{name}");
        let special_card_type = OverrideType::parse(&input.special_card_type);
        if special_card_type.is_none() {
            v.push(FieldViolation::new(
                at("special_card_type"),
                "invalid",
                "must be in or out",
            ));
        }
        let card_id = v.check(bounded_text(&at("card_id"), &input.card_id, 1, MAX_CARD_ID));
        let card_name = v.check(name(&at("card_name"), &input.card_name, MAX_NAME));
        let quantity = input.quantity.unwrap_or(1);
        // A count no card line can have is out of range like 0.
        let quantity = u32::try_from(quantity).unwrap_or(0);
        let quantity = v.check(check_quantity(at("quantity"), quantity).map(|()| quantity));
        let position = i64::try_from(index).unwrap_or(MAX_SORT_ORDER);
        let order = v.check(sort_order(at("sort_order"))(
            &input.sort_order.unwrap_or(position),
        ));
        if let (
            Some(special_card_type),
            Some(card_id),
            Some(card_name),
            Some(quantity),
            Some(sort_order),
        ) = (special_card_type, card_id, card_name, quantity, order)
        {
            checked.push(CardOverride {
                special_card_type,
                card_id,
                card_name,
                quantity,
                sort_order,
            });
        }
    }
    (v.0.len() == before).then_some(checked)
}

impl MatchupChanges {
    fn check_into(&self, prefix: &str, v: &mut Violations) -> CheckedMatchup {
        let at = |name: &str| format!("{prefix}{name}");
        let difficulties = Difficulty::ALL.map(Difficulty::as_str).join(", ");
        CheckedMatchup {
            opponent_deck_name: v.check_sent(self.opponent_deck_name.as_deref(), |value| {
                name(&at("opponent_deck_name"), value, MAX_OPPONENT_DECK_NAME)
            }),
            opponent_archetype: optional_text(
                v,
                &at("opponent_archetype"),
                &self.opponent_archetype,
                MAX_OPPONENT_ARCHETYPE,
            ),
            difficulty: v.check_sent(self.difficulty.as_deref(), |value| {
                Difficulty::parse(value).ok_or_else(|| {
                    FieldViolation::new(
                        at("difficulty"),
                        "invalid",
                        format!("must be one of {difficulties}"),
                    )
                })
            }),
            notes: v.check_sent(self.notes.as_deref(), |value| {
                bounded_text(&at("notes"), value, 0, MAX_MATCHUP_NOTES)
            }),
            play_notes: v.check_sent(self.play_notes.as_deref(), |value| {
                bounded_text(&at("play_notes"), value, 0, MAX_MATCHUP_NOTES)
            }),
            draw_notes: v.check_sent(self.draw_notes.as_deref(), |value| {
                bounded_text(&at("draw_notes"), value, 0, MAX_MATCHUP_NOTES)
            }),
            sort_order: v.check_sent(self.sort_order.as_ref(), sort_order(at("sort_order"))),
            thumbnail: optional_text(v, &at("thumbnail"), &self.thumbnail, MAX_THUMBNAIL),
            is_featured: self.is_featured,
            special_card_overrides: self
                .special_card_overrides
                .as_deref()
                .and_then(|inputs| overrides(prefix, inputs, v)),
        }
    }

    /// A new matchup's content, or `None` with its violations recorded under `prefix`.
    fn check_new_into(&self, prefix: &str, v: &mut Violations) -> Option<MatchupContent> {
        let before = v.0.len();
        if self.opponent_deck_name.is_none() {
            v.push(FieldViolation::new(
                format!("{prefix}opponent_deck_name"),
                "required",
                "a matchup needs the opponent's deck name",
            ));
        }
        let checked = self.check_into(prefix, v);
        (v.0.len() == before).then(|| {
            checked.apply(MatchupContent {
                opponent_deck_name: String::new(),
                opponent_archetype: None,
                difficulty: Difficulty::Medium,
                notes: String::new(),
                play_notes: String::new(),
                draw_notes: String::new(),
                sort_order: 0,
                thumbnail: None,
                is_featured: false,
                special_card_overrides: Vec::new(),
            })
        })
    }

    /// A new matchup (`POST .../matchups`).
    pub(crate) fn check_new(&self) -> Result<MatchupContent, Violations> {
        let mut v = Violations::default();
        match self.check_new_into("", &mut v) {
            Some(content) if v.0.is_empty() => Ok(content),
            _ => Err(v),
        }
    }

    /// A matchup PATCH: at least one field.
    pub(crate) fn check_patch(&self) -> Result<CheckedMatchup, Violations> {
        let mut v = Violations::default();
        v.check_patch_not_empty(*self == Self::default());
        let checked = self.check_into("", &mut v);
        v.into_result(checked)
    }
}

impl CheckedMatchup {
    pub(crate) fn apply(self, content: MatchupContent) -> MatchupContent {
        MatchupContent {
            opponent_deck_name: self
                .opponent_deck_name
                .unwrap_or(content.opponent_deck_name),
            opponent_archetype: self
                .opponent_archetype
                .applied_to(content.opponent_archetype),
            difficulty: self.difficulty.unwrap_or(content.difficulty),
            notes: self.notes.unwrap_or(content.notes),
            play_notes: self.play_notes.unwrap_or(content.play_notes),
            draw_notes: self.draw_notes.unwrap_or(content.draw_notes),
            sort_order: self.sort_order.unwrap_or(content.sort_order),
            thumbnail: self.thumbnail.applied_to(content.thumbnail),
            is_featured: self.is_featured.unwrap_or(content.is_featured),
            special_card_overrides: self
                .special_card_overrides
                .unwrap_or(content.special_card_overrides),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(result: Result<impl std::fmt::Debug, Violations>) -> Vec<(String, &'static str)> {
        result.unwrap_err().codes()
    }

    #[test]
    fn every_patch_bound_is_reported_together() {
        let changes = GuideChanges {
            name: Some(String::new()),
            description: Some("d".repeat(MAX_DESCRIPTION + 1)),
            notes: Some("n".repeat(MAX_NOTES + 1)),
            visibility: Some(vec![String::new()]),
            tags: Some(vec!["ok".into(), String::new(), "t".repeat(51)]),
            format: Patch::Set("f".repeat(51)),
            thumbnail: Patch::Set("t".repeat(256)),
            youtube_url: Patch::Set("y".repeat(501)),
            premium: Some(true),
            is_archived: None,
        };
        assert_eq!(
            fields(changes.check_patch()),
            [
                ("name".to_owned(), "length"),
                ("description".to_owned(), "length"),
                ("notes".to_owned(), "length"),
                ("visibility".to_owned(), "invalid"),
                ("tags[1]".to_owned(), "length"),
                ("tags[2]".to_owned(), "length"),
                ("format".to_owned(), "length"),
                ("thumbnail".to_owned(), "length"),
                ("youtube_url".to_owned(), "length"),
            ]
        );
    }

    #[test]
    fn bounds_hold_at_their_limits() {
        let changes = GuideChanges {
            name: Some("é".repeat(MAX_NAME)),
            tags: Some((0..MAX_TAGS).map(|n| format!("{n:0>50}")).collect()),
            format: Patch::Set("f".repeat(MAX_FORMAT)),
            thumbnail: Patch::Clear,
            ..GuideChanges::default()
        };
        let checked = changes.check_patch().unwrap();
        assert_eq!(checked.format, Patch::Set("f".repeat(50)));
        assert_eq!(checked.thumbnail, Patch::Clear);
        let too_many = GuideChanges {
            tags: Some((0..=MAX_TAGS).map(|n| n.to_string()).collect()),
            ..GuideChanges::default()
        };
        assert_eq!(
            fields(too_many.check_patch()),
            [("tags".to_owned(), "too_many")]
        );
    }

    #[test]
    fn tags_keep_their_order_and_lose_repeats() {
        let changes = GuideChanges {
            tags: Some(vec!["b".into(), "a".into(), "b".into()]),
            ..GuideChanges::default()
        };
        assert_eq!(
            changes.check_patch().unwrap().tags,
            Some(vec!["b".to_owned(), "a".to_owned()])
        );
    }

    #[test]
    fn an_empty_patch_is_refused_and_blank_names_too() {
        assert_eq!(
            fields(GuideChanges::default().check_patch()),
            [("body".to_owned(), "empty")]
        );
        let blank = GuideChanges {
            name: Some("  ".into()),
            ..GuideChanges::default()
        };
        assert_eq!(fields(blank.check_patch()), [("name".to_owned(), "blank")]);
    }

    #[test]
    fn a_new_guide_needs_a_name_and_a_deck_and_its_matchups_are_checked_by_position() {
        let input = NewGuideInput {
            deck_id: None,
            fields: GuideChanges {
                is_archived: Some(true),
                ..GuideChanges::default()
            },
            matchups: vec![
                MatchupChanges {
                    opponent_deck_name: Some("Burn".into()),
                    ..MatchupChanges::default()
                },
                MatchupChanges {
                    difficulty: Some("IMPOSSIBLE".into()),
                    special_card_overrides: Some(vec![OverrideInput {
                        special_card_type: "sideways".into(),
                        card_id: "c".into(),
                        card_name: "Card".into(),
                        quantity: Some(0),
                        sort_order: None,
                    }]),
                    ..MatchupChanges::default()
                },
            ],
        };
        assert_eq!(
            fields(input.check()),
            [
                ("name".to_owned(), "required"),
                ("is_archived".to_owned(), "unknown_field"),
                ("deck_id".to_owned(), "required"),
                ("matchups[1].opponent_deck_name".to_owned(), "required"),
                ("matchups[1].difficulty".to_owned(), "invalid"),
                (
                    "matchups[1].special_card_overrides[0].special_card_type".to_owned(),
                    "invalid"
                ),
                (
                    "matchups[1].special_card_overrides[0].quantity".to_owned(),
                    "range"
                ),
            ]
        );
    }

    #[test]
    fn a_new_guide_takes_defaults() {
        let input = NewGuideInput {
            deck_id: Some(uuid::Uuid::nil().to_string()),
            fields: GuideChanges {
                name: Some("Plan".into()),
                ..GuideChanges::default()
            },
            matchups: vec![MatchupChanges {
                opponent_deck_name: Some("Burn".into()),
                special_card_overrides: Some(vec![OverrideInput {
                    special_card_type: "in".into(),
                    card_id: "c1".into(),
                    card_name: "Card".into(),
                    ..OverrideInput::default()
                }]),
                ..MatchupChanges::default()
            }],
        };
        let checked = input.check().unwrap();
        assert_eq!(checked.content.visibility, Visibility::Private);
        assert!(!checked.content.premium);
        let matchup = &checked.matchups[0];
        assert_eq!(matchup.difficulty, Difficulty::Medium);
        assert_eq!(matchup.special_card_overrides[0].quantity, 1);
        assert_eq!(matchup.special_card_overrides[0].sort_order, 0);
    }

    #[test]
    fn matchup_patches_check_enums_and_ranges() {
        let changes = MatchupChanges {
            difficulty: Some("very_easy".into()),
            sort_order: Some(-1),
            opponent_archetype: Patch::Set("a".repeat(101)),
            ..MatchupChanges::default()
        };
        assert_eq!(
            fields(changes.check_patch()),
            [
                ("opponent_archetype".to_owned(), "length"),
                ("difficulty".to_owned(), "invalid"),
                ("sort_order".to_owned(), "range"),
            ]
        );
        assert_eq!(
            fields(MatchupChanges::default().check_patch()),
            [("body".to_owned(), "empty")]
        );
        let every = Difficulty::ALL.map(|difficulty| {
            MatchupChanges {
                difficulty: Some(difficulty.as_str().into()),
                ..MatchupChanges::default()
            }
            .check_patch()
            .unwrap()
            .difficulty
        });
        assert_eq!(every, Difficulty::ALL.map(Some));
    }
}
