//! What a deck still needs from a collection.

use std::collections::HashMap;

use uuid::Uuid;

use crate::catalog::{Game, name_key};
use crate::decks::DeckCard;
use crate::decks::export::exported_sections;
use crate::decks::text::{DeckList, ListLine, render};

/// One card of one counted section of a deck, and how much of it the collection covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedItem {
    pub card_id: Uuid,
    pub name: String,
    pub section: String,
    pub quantity: u32,
    pub owned: u32,
    pub missing: u32,
}

/// A deck's needs: what the collection covers (`have`) and what it lacks (`need`), in copies.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Needs {
    pub have: u32,
    pub need: u32,
    pub items: Vec<NeedItem>,
}

/// The cards of a deck's counted sections, by card: what [`needs`] asks the store about.
pub fn counted_cards(game: &Game, cards: &[DeckCard]) -> Vec<Uuid> {
    let mut ids: Vec<Uuid> = cards
        .iter()
        .filter(|card| {
            game.section(&card.section)
                .is_some_and(|section| section.counted)
        })
        .map(|card| card.card.card_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The needs of a deck's `cards` against `owned` copies per card (any printing and finish):
/// one item per card and counted section; each owned copy covers one deck copy, the sections
/// taking copies in the game's order. Items sorted by name, then section in game order.
pub fn needs(game: &Game, cards: &[DeckCard], owned: &HashMap<Uuid, u64>) -> Needs {
    let order = |key: &str| game.sections.iter().position(|section| section.key == key);
    let mut wanted: HashMap<(Uuid, usize), NeedItem> = HashMap::new();
    for card in cards {
        let Some(position) = order(&card.section).filter(|&at| game.sections[at].counted) else {
            continue;
        };
        wanted
            .entry((card.card.card_id, position))
            .or_insert_with(|| NeedItem {
                card_id: card.card.card_id,
                name: card.card.name.clone(),
                section: card.section.clone(),
                quantity: 0,
                owned: 0,
                missing: 0,
            })
            .quantity += card.quantity;
    }
    let mut keyed: Vec<((Uuid, usize), NeedItem)> = wanted.into_iter().collect();
    // Game order within a card, so the earlier sections take the copies first.
    keyed.sort_by_key(|((card, position), _)| (*card, *position));
    let mut left: HashMap<Uuid, u64> = owned.clone();
    for ((card, _), item) in &mut keyed {
        let available = left.entry(*card).or_insert(0);
        let covered = u64::from(item.quantity).min(*available);
        *available -= covered;
        item.owned = u32::try_from(covered).unwrap_or(item.quantity);
        item.missing = item.quantity - item.owned;
    }
    keyed.sort_by(|((_, a_at), a), ((_, b_at), b)| {
        (name_key(&a.name), a_at, a.card_id).cmp(&(name_key(&b.name), b_at, b.card_id))
    });
    let items: Vec<NeedItem> = keyed.into_iter().map(|(_, item)| item).collect();
    Needs {
        have: items.iter().map(|item| item.owned).sum(),
        need: items.iter().map(|item| item.missing).sum(),
        items,
    }
}

/// The missing cards as deck text, per section in game order under its label, one
/// `<missing> <name>` line each (any printing will do): a shopping list the deck-text parser
/// reads back. Nothing missing: the empty string.
pub fn shopping_list(game: &Game, needs: &Needs) -> String {
    let sections = exported_sections(game)
        .into_iter()
        .map(|section| {
            let lines = needs
                .items
                .iter()
                .filter(|item| item.section == section.key && item.missing > 0)
                .map(|item| ListLine {
                    quantity: item.missing,
                    name: item.name.clone(),
                    printing: None,
                    foil: false,
                })
                .collect();
            (section, lines)
        })
        .collect();
    render(&DeckList { sections })
}
