//! Card shapes: identifiers as callers send them, and resolution results (also carried by
//! the 422 of deck writes).

use deckhand_domain::catalog::{CardIdentifier, Printing, Resolved, Unresolved};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Declares a DTO that names a card: its own fields, then the thirteen identifier fields, spelled
/// here once for every shape that carries a card identifier (this module's
/// [`CardIdentifierDto`], the card lines and featured cards of deck writes, the collection's
/// changes). serde's `deny_unknown_fields`, which every request body keeps, does not combine
/// with `#[serde(flatten)]`, hence a macro rather than a nested struct.
macro_rules! with_card_identifier {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $field_type:ty,)*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $field_type,)*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub catalog_a_id: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub catalog_b_id: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub catalog_c_id: Option<String>,
            #[serde(default, rename = "cardId", skip_serializing_if = "Option::is_none")]
            pub card_id: Option<String>,
            #[serde(default, rename = "variantId", skip_serializing_if = "Option::is_none")]
            pub variant_id: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub set: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub collector_number: Option<String>,
            /// With `name`: 1, 2, 3 or the colour (`fab`: `red`, `yellow`, `blue`).
            #[serde(
                default,
                deserialize_with = "crate::dto::cards::text_or_number",
                skip_serializing_if = "Option::is_none"
            )]
            #[schema(value_type = Option<String>)]
            pub pitch: Option<String>,
            /// `fab`'s card identifier (`sink-below-red`), matched as `catalog_b_id`.
            #[serde(
                default,
                rename = "cardIdentifier",
                skip_serializing_if = "Option::is_none"
            )]
            pub card_identifier: Option<String>,
            /// A printing identifier (`WTR216`): set code and number.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub print: Option<String>,
            /// Another name of `set`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub set_code: Option<String>,
            /// The TCGplayer product id, matched as `catalog_a_id`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tcgplayer_id: Option<String>,
        }
    };
}
pub(crate) use with_card_identifier;

with_card_identifier! {
    /// A card identifier: every field an optional string.
    #[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CardIdentifierDto {}
}

/// A field sent as a string or as a number (`"pitch": 1` or `"pitch": "red"`), kept as text.
pub(crate) fn text_or_number<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum TextOrNumber {
        Text(String),
        Number(serde_json::Number),
    }
    Ok(
        Option::<TextOrNumber>::deserialize(deserializer)?.map(|value| match value {
            TextOrNumber::Text(text) => text,
            TextOrNumber::Number(number) => number.to_string(),
        }),
    )
}

/// A `$target` of the thirteen identifier fields moved out of `$source`: every shape that carries
/// a card identifier (this DTO, the card lines and featured cards of deck writes, the domain's
/// `CardIdentifier`) names them alike, so one list of them serves every conversion.
macro_rules! identifier_fields {
    ($target:ident, $source:expr) => {
        $target {
            catalog_a_id: $source.catalog_a_id,
            catalog_b_id: $source.catalog_b_id,
            catalog_c_id: $source.catalog_c_id,
            card_id: $source.card_id,
            variant_id: $source.variant_id,
            name: $source.name,
            set: $source.set,
            collector_number: $source.collector_number,
            pitch: $source.pitch,
            card_identifier: $source.card_identifier,
            print: $source.print,
            set_code: $source.set_code,
            tcgplayer_id: $source.tcgplayer_id,
        }
    };
}
pub(crate) use identifier_fields;

impl From<CardIdentifierDto> for CardIdentifier {
    fn from(dto: CardIdentifierDto) -> Self {
        identifier_fields!(CardIdentifier, dto)
    }
}

impl From<CardIdentifier> for CardIdentifierDto {
    fn from(identifier: CardIdentifier) -> Self {
        identifier_fields!(CardIdentifierDto, identifier)
    }
}

/// A printing as resolution returns it (the contract's "Card resolution").
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CardDto {
    #[serde(rename = "cardId")]
    pub card_id: uuid::Uuid,
    #[serde(rename = "variantId")]
    pub variant_id: uuid::Uuid,
    pub name: String,
    pub set: String,
    pub collector_number: String,
    pub type_line: String,
    #[serde(rename = "imageUrl")]
    pub image_url: Option<String>,
    pub colors: Vec<String>,
    pub catalog_a_id: Option<String>,
    pub catalog_b_id: Option<String>,
    pub catalog_c_id: Option<String>,
}

impl From<Printing> for CardDto {
    fn from(printing: Printing) -> Self {
        Self {
            card_id: printing.card_id,
            variant_id: printing.variant_id,
            name: printing.name,
            set: printing.set,
            collector_number: printing.collector_number,
            type_line: printing.type_line,
            image_url: printing.image_url,
            colors: printing.colors,
            catalog_a_id: printing.catalog_a_id,
            catalog_b_id: printing.catalog_b_id,
            catalog_c_id: printing.catalog_c_id,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ResolvedDto {
    /// Position of the identifier in the request.
    index: usize,
    input: CardIdentifierDto,
    /// `variant_id`, `catalog_a_id`, `catalog_b_id`, `catalog_c_id`,
    /// `set_and_collector_number`, `card_id` or `name`.
    #[schema(value_type = String)]
    matched_by: deckhand_domain::catalog::MatchedBy,
    card: CardDto,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct UnresolvedDto {
    index: usize,
    input: CardIdentifierDto,
    /// `empty`, `not_found`, `ambiguous` or `not_legal_in_format`.
    #[schema(value_type = String)]
    reason: deckhand_domain::catalog::UnresolvedReason,
}

impl From<Resolved> for ResolvedDto {
    fn from(resolved: Resolved) -> Self {
        Self {
            index: resolved.index,
            input: resolved.input.into(),
            matched_by: resolved.matched_by,
            card: resolved.printing.into(),
        }
    }
}

impl From<Unresolved> for UnresolvedDto {
    fn from(unresolved: Unresolved) -> Self {
        Self {
            index: unresolved.index,
            input: unresolved.input.into(),
            reason: unresolved.reason,
        }
    }
}
