//! The JSON that the tables store (`decks.cards`, `decks.featured`, `decks.summary`,
//! `deck_versions.content`, `deck_versions.summary` and `sideboard_matchups.special_card_overrides`;
//! a guide's primary-deck summary is `decks.summary`), as types of this crate. The stored
//! format is defined here, not by the domain's serde derives, so a change to a domain type cannot
//! silently change the format of new rows or stop old ones from reading; the golden test below
//! pins it. The columns are `json` (migration `2026-11-25-000400_deck_content_as_json`): their
//! text is read straight into these types and written straight from them (no
//! `serde_json::Value` in between), which is most of what a deck read costs the service.

use std::collections::BTreeMap;
use std::io::Write as _;

use anyhow::Context as _;

use deckhand_domain::decks::{
    CardSnapshot, DeckCard, DeckContent, DeckSummary, FeaturedCard, FeaturedChoice, FeaturedSlot,
    Visibility,
};
use deckhand_domain::sideboards::{CardOverride, OverrideType};
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::expression::AsExpression;
use diesel::pg::{Pg, PgValue};
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::{Json as SqlJson, Jsonb};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A json value (whose binary format is its text) or jsonb value (a version byte, then the
/// text) read into `T` and written from it, without an intermediate `Value`.
#[derive(Debug, Clone, PartialEq, FromSqlRow, AsExpression)]
#[diesel(sql_type = SqlJson)]
#[diesel(sql_type = Jsonb)]
pub(crate) struct Json<T>(pub T);

/// The one version of jsonb's binary format.
const JSONB_VERSION: u8 = 1;

impl<T: DeserializeOwned> FromSql<Jsonb, Pg> for Json<T> {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        match value.as_bytes().split_first() {
            Some((&JSONB_VERSION, text)) => Ok(Self(serde_json::from_slice(text)?)),
            _ => Err("unsupported jsonb format version".into()),
        }
    }
}

impl<T: Serialize + std::fmt::Debug> ToSql<Jsonb, Pg> for Json<T> {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        out.write_all(&[JSONB_VERSION])?;
        serde_json::to_writer(out, &self.0)?;
        Ok(IsNull::No)
    }
}

impl<T: DeserializeOwned> FromSql<SqlJson, Pg> for Json<T> {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        Ok(Self(serde_json::from_slice(value.as_bytes())?))
    }
}

impl<T: Serialize + std::fmt::Debug> ToSql<SqlJson, Pg> for Json<T> {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        serde_json::to_writer(out, &self.0)?;
        Ok(IsNull::No)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoredVisibility {
    Public,
    Unlisted,
    Private,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoredSlot {
    Commander,
    Companion,
    Cover,
    Hero,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredSnapshot {
    variant_id: Uuid,
    card_id: Uuid,
    name: String,
    set: String,
    collector_number: String,
    type_line: String,
    image_url: Option<String>,
    colors: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredCard {
    section: String,
    quantity: u32,
    foil: bool,
    card: StoredSnapshot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredChoice {
    slot: StoredSlot,
    foil: bool,
    card: StoredSnapshot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredFeatured {
    slot: StoredSlot,
    slot_key: String,
    label: String,
    sort_order: u32,
    foil: bool,
    card: StoredSnapshot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredSummary {
    section_counts: BTreeMap<String, u32>,
    colors: Vec<String>,
    featured_cards: Vec<StoredFeatured>,
}

/// What a history record keeps: the whole content, its cards left out when another record of
/// the deck holds the same list (`deck_versions.cards_from`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredContent {
    name: String,
    notes: String,
    visibility: StoredVisibility,
    format_id: Option<Uuid>,
    youtube_url: Option<String>,
    thumbnail: Option<String>,
    legal: bool,
    archetype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cards: Option<Vec<StoredCard>>,
    featured: Option<Vec<StoredChoice>>,
}

impl From<Visibility> for StoredVisibility {
    fn from(visibility: Visibility) -> Self {
        match visibility {
            Visibility::Public => Self::Public,
            Visibility::Unlisted => Self::Unlisted,
            Visibility::Private => Self::Private,
        }
    }
}

impl From<StoredVisibility> for Visibility {
    fn from(visibility: StoredVisibility) -> Self {
        match visibility {
            StoredVisibility::Public => Self::Public,
            StoredVisibility::Unlisted => Self::Unlisted,
            StoredVisibility::Private => Self::Private,
        }
    }
}

impl From<FeaturedSlot> for StoredSlot {
    fn from(slot: FeaturedSlot) -> Self {
        match slot {
            FeaturedSlot::Commander => Self::Commander,
            FeaturedSlot::Companion => Self::Companion,
            FeaturedSlot::Cover => Self::Cover,
            FeaturedSlot::Hero => Self::Hero,
        }
    }
}

impl From<StoredSlot> for FeaturedSlot {
    fn from(slot: StoredSlot) -> Self {
        match slot {
            StoredSlot::Commander => Self::Commander,
            StoredSlot::Companion => Self::Companion,
            StoredSlot::Cover => Self::Cover,
            StoredSlot::Hero => Self::Hero,
        }
    }
}

impl From<&CardSnapshot> for StoredSnapshot {
    fn from(card: &CardSnapshot) -> Self {
        Self {
            variant_id: card.variant_id,
            card_id: card.card_id,
            name: card.name.clone(),
            set: card.set.clone(),
            collector_number: card.collector_number.clone(),
            type_line: card.type_line.clone(),
            image_url: card.image_url.clone(),
            colors: card.colors.clone(),
        }
    }
}

impl From<StoredSnapshot> for CardSnapshot {
    fn from(card: StoredSnapshot) -> Self {
        Self {
            variant_id: card.variant_id,
            card_id: card.card_id,
            name: card.name,
            set: card.set,
            collector_number: card.collector_number,
            type_line: card.type_line,
            image_url: card.image_url,
            colors: card.colors,
        }
    }
}

impl From<&DeckCard> for StoredCard {
    fn from(line: &DeckCard) -> Self {
        Self {
            section: line.section.clone(),
            quantity: line.quantity,
            foil: line.foil,
            card: (&line.card).into(),
        }
    }
}

impl From<StoredCard> for DeckCard {
    fn from(line: StoredCard) -> Self {
        Self {
            section: line.section,
            quantity: line.quantity,
            foil: line.foil,
            card: line.card.into(),
        }
    }
}

impl From<&FeaturedChoice> for StoredChoice {
    fn from(choice: &FeaturedChoice) -> Self {
        Self {
            slot: choice.slot.into(),
            foil: choice.foil,
            card: (&choice.card).into(),
        }
    }
}

impl From<StoredChoice> for FeaturedChoice {
    fn from(choice: StoredChoice) -> Self {
        Self {
            slot: choice.slot.into(),
            foil: choice.foil,
            card: choice.card.into(),
        }
    }
}

impl From<&FeaturedCard> for StoredFeatured {
    fn from(featured: &FeaturedCard) -> Self {
        Self {
            slot: featured.slot.into(),
            slot_key: featured.slot_key.clone(),
            label: featured.label.clone(),
            sort_order: featured.sort_order,
            foil: featured.foil,
            card: (&featured.card).into(),
        }
    }
}

impl From<StoredFeatured> for FeaturedCard {
    fn from(featured: StoredFeatured) -> Self {
        Self {
            slot: featured.slot.into(),
            slot_key: featured.slot_key,
            label: featured.label,
            sort_order: featured.sort_order,
            foil: featured.foil,
            card: featured.card.into(),
        }
    }
}

impl From<&DeckSummary> for StoredSummary {
    fn from(summary: &DeckSummary) -> Self {
        Self {
            section_counts: summary.section_counts.clone(),
            colors: summary.colors.clone(),
            featured_cards: summary.featured_cards.iter().map(Into::into).collect(),
        }
    }
}

impl From<StoredSummary> for DeckSummary {
    fn from(summary: StoredSummary) -> Self {
        Self {
            section_counts: summary.section_counts,
            colors: summary.colors,
            featured_cards: summary.featured_cards.into_iter().map(Into::into).collect(),
        }
    }
}

impl StoredContent {
    /// A history record of `content`, its cards left out when `cards_shared`.
    pub(crate) fn record(content: &DeckContent, cards_shared: bool) -> Self {
        Self {
            name: content.name.clone(),
            notes: content.notes.clone(),
            visibility: content.visibility.into(),
            format_id: content.format_id,
            youtube_url: content.youtube_url.clone(),
            thumbnail: content.thumbnail.clone(),
            legal: content.legal,
            archetype: content.archetype.clone(),
            cards: (!cards_shared).then(|| stored_cards(&content.cards)),
            featured: content.featured.as_deref().map(stored_choices),
        }
    }

    /// The content this record keeps, with `shared_cards` (those of the record that holds them)
    /// when it keeps none of its own.
    pub(crate) fn into_domain(
        self,
        shared_cards: Option<Vec<StoredCard>>,
    ) -> anyhow::Result<DeckContent> {
        let cards = self
            .cards
            .or(shared_cards)
            .context("a history record without cards names no record that holds them")?;
        Ok(DeckContent {
            name: self.name,
            notes: self.notes,
            visibility: self.visibility.into(),
            format_id: self.format_id,
            youtube_url: self.youtube_url,
            thumbnail: self.thumbnail,
            legal: self.legal,
            archetype: self.archetype,
            cards: domain_cards(cards),
            featured: self.featured.map(domain_choices),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StoredOverrideType {
    In,
    Out,
}

/// One card a matchup brings in or takes out (`sideboard_matchups.special_card_overrides` holds
/// an array of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredOverride {
    special_card_type: StoredOverrideType,
    card_id: String,
    card_name: String,
    quantity: u32,
    sort_order: i32,
}

impl From<&CardOverride> for StoredOverride {
    fn from(card: &CardOverride) -> Self {
        Self {
            special_card_type: match card.special_card_type {
                OverrideType::In => StoredOverrideType::In,
                OverrideType::Out => StoredOverrideType::Out,
            },
            card_id: card.card_id.clone(),
            card_name: card.card_name.clone(),
            quantity: card.quantity,
            sort_order: card.sort_order,
        }
    }
}

impl From<StoredOverride> for CardOverride {
    fn from(card: StoredOverride) -> Self {
        Self {
            special_card_type: match card.special_card_type {
                StoredOverrideType::In => OverrideType::In,
                StoredOverrideType::Out => OverrideType::Out,
            },
            card_id: card.card_id,
            card_name: card.card_name,
            quantity: card.quantity,
            sort_order: card.sort_order,
        }
    }
}

pub(crate) fn stored_cards(cards: &[DeckCard]) -> Vec<StoredCard> {
    cards.iter().map(Into::into).collect()
}

pub(crate) fn domain_cards(cards: Vec<StoredCard>) -> Vec<DeckCard> {
    cards.into_iter().map(Into::into).collect()
}

pub(crate) fn stored_choices(choices: &[FeaturedChoice]) -> Vec<StoredChoice> {
    choices.iter().map(Into::into).collect()
}

pub(crate) fn domain_choices(choices: Vec<StoredChoice>) -> Vec<FeaturedChoice> {
    choices.into_iter().map(Into::into).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn snapshot() -> CardSnapshot {
        CardSnapshot {
            variant_id: Uuid::from_u128(1),
            card_id: Uuid::from_u128(2),
            name: "Arclight Phoenix".into(),
            set: "grn".into(),
            collector_number: "91".into(),
            type_line: "Creature — Phoenix".into(),
            image_url: None,
            colors: vec!["R".into()],
        }
    }

    fn content() -> DeckContent {
        DeckContent {
            name: "Izzet Phoenix".into(),
            notes: "".into(),
            visibility: Visibility::Unlisted,
            format_id: Some(Uuid::from_u128(3)),
            youtube_url: None,
            thumbnail: Some("https://example.org/t.jpg".into()),
            legal: true,
            archetype: None,
            cards: vec![DeckCard {
                section: "mainboard".into(),
                quantity: 4,
                foil: false,
                card: snapshot(),
            }],
            featured: Some(vec![FeaturedChoice {
                slot: FeaturedSlot::Cover,
                foil: true,
                card: snapshot(),
            }]),
        }
    }

    fn summary() -> DeckSummary {
        DeckSummary {
            section_counts: [("mainboard".to_owned(), 4)].into(),
            colors: vec!["R".into()],
            featured_cards: vec![FeaturedCard {
                slot: FeaturedSlot::Commander,
                slot_key: "commander:0".into(),
                label: "Commander".into(),
                sort_order: 0,
                foil: false,
                card: snapshot(),
            }],
        }
    }

    const CARD: &str = r#"{"variant_id":"00000000-0000-0000-0000-000000000001","card_id":"00000000-0000-0000-0000-000000000002","name":"Arclight Phoenix","set":"grn","collector_number":"91","type_line":"Creature — Phoenix","image_url":null,"colors":["R"]}"#;

    /// The format rows were written in before this crate owned it: it must never change
    /// without a migration of the stored rows.
    #[test]
    fn the_stored_format_is_pinned() {
        let content_json = format!(
            r#"{{"name":"Izzet Phoenix","notes":"","visibility":"unlisted","format_id":"00000000-0000-0000-0000-000000000003","youtube_url":null,"thumbnail":"https://example.org/t.jpg","legal":true,"archetype":null,"cards":[{{"section":"mainboard","quantity":4,"foil":false,"card":{CARD}}}],"featured":[{{"slot":"cover","foil":true,"card":{CARD}}}]}}"#
        );
        let summary_json = format!(
            r#"{{"section_counts":{{"mainboard":4}},"colors":["R"],"featured_cards":[{{"slot":"commander","slot_key":"commander:0","label":"Commander","sort_order":0,"foil":false,"card":{CARD}}}]}}"#
        );
        assert_eq!(
            serde_json::to_string(&StoredContent::record(&content(), false)).unwrap(),
            content_json
        );
        assert_eq!(
            serde_json::to_string(&StoredSummary::from(&summary())).unwrap(),
            summary_json
        );
        let read: StoredContent = serde_json::from_str(&content_json).unwrap();
        assert_eq!(read.into_domain(None).unwrap(), content());
        let read: StoredSummary = serde_json::from_str(&summary_json).unwrap();
        assert_eq!(DeckSummary::from(read), summary());
    }

    /// Matchup overrides as rows hold them since migration 2026-11-23: never to change
    /// without a migration of the stored rows.
    #[test]
    fn the_stored_override_format_is_pinned() {
        let card = CardOverride {
            special_card_type: OverrideType::Out,
            card_id: "card-7".into(),
            card_name: "Lightning Bolt".into(),
            quantity: 2,
            sort_order: 1,
        };
        let json = r#"{"special_card_type":"out","card_id":"card-7","card_name":"Lightning Bolt","quantity":2,"sort_order":1}"#;
        assert_eq!(
            serde_json::to_string(&StoredOverride::from(&card)).unwrap(),
            json
        );
        let read: StoredOverride = serde_json::from_str(json).unwrap();
        assert_eq!(CardOverride::from(read), card);
    }

    /// Rows written before `featured` existed, and `null` optional strings, still read.
    #[test]
    fn absent_optional_fields_read_as_none() {
        let text = r#"{"name":"n","notes":"","visibility":"public","format_id":null,"youtube_url":null,"thumbnail":null,"legal":false,"archetype":null,"cards":[]}"#;
        let read: StoredContent = serde_json::from_str(text).unwrap();
        assert_eq!(read.into_domain(None).unwrap().featured, None);
    }

    /// A record that shares its cards has no "cards" key and reads them from the holder's.
    #[test]
    fn a_record_sharing_its_cards_leaves_them_out() {
        let text = serde_json::to_string(&StoredContent::record(&content(), true)).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"name":"Izzet Phoenix","notes":"","visibility":"unlisted","format_id":"00000000-0000-0000-0000-000000000003","youtube_url":null,"thumbnail":"https://example.org/t.jpg","legal":true,"archetype":null,"featured":[{{"slot":"cover","foil":true,"card":{CARD}}}]}}"#
            )
        );
        let read: StoredContent = serde_json::from_str(&text).unwrap();
        let holders_cards = stored_cards(&content().cards);
        assert_eq!(
            read.clone().into_domain(Some(holders_cards)).unwrap(),
            content()
        );
        assert!(read.into_domain(None).is_err());
    }
}
