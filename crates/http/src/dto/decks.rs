//! Deck shapes more than one resource renders: the author and featured cards (decks and
//! sideboard guides show both).

use deckhand_domain::decks::{Author, FeaturedCard};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuthorDto {
    /// The bare user id (equals `user.id` of the user probe).
    #[schema(value_type = String)]
    id: Uuid,
    username: String,
}

impl From<&Author> for AuthorDto {
    fn from(author: &Author) -> Self {
        Self {
            id: author.id.0,
            username: author.username.as_str().to_owned(),
        }
    }
}

/// A featured card, as lists and the deck detail show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeaturedCardDto {
    slot: String,
    #[serde(rename = "slotKey")]
    slot_key: String,
    label: String,
    #[serde(rename = "sortOrder")]
    sort_order: u32,
    foil: bool,
    #[serde(rename = "cardId")]
    card_id: String,
    name: String,
    #[serde(rename = "imageUrl")]
    image_url: Option<String>,
    type_line: String,
    set: String,
    collector_number: String,
}

impl From<&FeaturedCard> for FeaturedCardDto {
    fn from(featured: &FeaturedCard) -> Self {
        Self {
            slot: featured.slot.as_str().to_owned(),
            slot_key: featured.slot_key.clone(),
            label: featured.label.clone(),
            sort_order: featured.sort_order,
            foil: featured.foil,
            card_id: featured.card.card_id.to_string(),
            name: featured.card.name.clone(),
            image_url: featured.card.image_url.clone(),
            type_line: featured.card.type_line.clone(),
            set: featured.card.set.clone(),
            collector_number: featured.card.collector_number.clone(),
        }
    }
}
