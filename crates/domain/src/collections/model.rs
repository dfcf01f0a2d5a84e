use std::collections::HashMap;

use time::OffsetDateTime;
use uuid::Uuid;

use crate::catalog::{Printing, name_key};
use crate::decks::PageRequest;
use crate::events::Origin;
use crate::identity::UserId;

/// At most this many changes in one PATCH.
pub const MAX_CHANGES: usize = 5000;

/// What an entry keeps of a catalog printing, copied when it is written, so that reading a
/// collection needs no catalog lookups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionCard {
    pub variant_id: Uuid,
    pub card_id: Uuid,
    pub name: String,
    /// Lower case.
    pub set: String,
    pub collector_number: String,
}

impl From<Printing> for CollectionCard {
    fn from(printing: Printing) -> Self {
        Self {
            variant_id: printing.variant_id,
            card_id: printing.card_id,
            name: printing.name,
            set: printing.set,
            collector_number: printing.collector_number,
        }
    }
}

/// Copies of one printing in one finish that a user holds (always at least one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionEntry {
    pub card: CollectionCard,
    pub foil: bool,
    pub quantity: u32,
    /// How many of them the owner would trade; never more than `quantity`.
    pub trade_quantity: u32,
    /// As another site's export wrote them; kept and written back by the export.
    pub condition: Option<String>,
    pub language: Option<String>,
}

impl CollectionEntry {
    /// The order of every listing and export: name (case-insensitively), set, collector number,
    /// then the plain finish before foil.
    pub fn sort_key(&self) -> (String, String, String, bool) {
        (
            name_key(&self.card.name),
            self.card.set.clone(),
            self.card.collector_number.clone(),
            self.foil,
        )
    }
}

/// What a collection holds, and how often it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CollectionTotals {
    /// Distinct (printing, finish) pairs held.
    pub entries: u64,
    /// The sum of their quantities.
    pub cards: u64,
    /// 0 for a collection never written; one more for each write that changed it.
    pub version: i64,
}

/// How a write treats what the collection already holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Each line's quantities are deltas on what is held.
    Add,
    /// The lines are the whole collection afterwards.
    Replace,
}

/// One (printing, finish) of a write: a signed delta (or, replacing, the count), the first
/// request position that named it (what a refusal points at), and what another site's export
/// said of its condition and language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionLine {
    pub index: usize,
    pub card: CollectionCard,
    pub foil: bool,
    pub quantity: i64,
    pub trade_quantity: i64,
    pub condition: Option<String>,
    pub language: Option<String>,
}

/// Lines naming the same printing and finish become one, summing their quantities, at the
/// position of the first; a later condition or language wins. Order of first appearance kept.
pub fn merge_lines(lines: Vec<CollectionLine>) -> Vec<CollectionLine> {
    let mut merged: Vec<CollectionLine> = Vec::with_capacity(lines.len());
    let mut positions: HashMap<(Uuid, bool), usize> = HashMap::with_capacity(lines.len());
    for line in lines {
        match positions.get(&(line.card.variant_id, line.foil)) {
            Some(&at) => {
                let kept = &mut merged[at];
                kept.quantity += line.quantity;
                kept.trade_quantity += line.trade_quantity;
                if line.condition.is_some() {
                    kept.condition = line.condition;
                }
                if line.language.is_some() {
                    kept.language = line.language;
                }
            }
            None => {
                positions.insert((line.card.variant_id, line.foil), merged.len());
                merged.push(line);
            }
        }
    }
    merged
}

/// What is held of one printing and finish, and the rule a delta follows: the quantity may not
/// go below zero (the write is refused), the trade quantity stays within 0 and the quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Held {
    pub quantity: i64,
    pub trade_quantity: i64,
}

impl Held {
    /// What is held after `line` is added; `None` when the quantity would go below zero.
    pub fn after(self, line: &CollectionLine) -> Option<Held> {
        let quantity = self.quantity + line.quantity;
        (quantity >= 0).then(|| Held {
            quantity,
            trade_quantity: (self.trade_quantity + line.trade_quantity).clamp(0, quantity),
        })
    }
}

impl From<&CollectionEntry> for Held {
    fn from(entry: &CollectionEntry) -> Self {
        Self {
            quantity: i64::from(entry.quantity),
            trade_quantity: i64::from(entry.trade_quantity),
        }
    }
}

/// What each of `lines` (merged: each printing and finish once) leaves held, given what is
/// held of it before: the delta rule of every store, all or nothing. `Err` carries the lowest
/// request position of a line that would take a quantity below zero.
pub fn held_after(
    lines: &[CollectionLine],
    held_before: impl Fn(&CollectionLine) -> Held,
) -> Result<Vec<Held>, usize> {
    let mut after = Vec::with_capacity(lines.len());
    let mut below_zero: Option<usize> = None;
    for line in lines {
        match held_before(line).after(line) {
            Some(held) => after.push(held),
            None => below_zero = Some(below_zero.map_or(line.index, |at| at.min(line.index))),
        }
    }
    below_zero.map_or(Ok(after), Err)
}

/// One write of a user's collection of a game, with what its event needs (`events.rs` makes it).
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionWrite {
    pub owner: UserId,
    pub game: String,
    pub mode: WriteMode,
    /// Merged ([`merge_lines`]): each printing and finish at most once.
    pub lines: Vec<CollectionLine>,
    pub origin: Origin,
    pub at: OffsetDateTime,
}

/// The filters of a collection listing: a part of the card's name (any case) and a set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectionFilter {
    /// Lower case, trimmed; matched anywhere in the name.
    pub name_contains: Option<String>,
    /// Lower case.
    pub set: Option<String>,
}

impl CollectionFilter {
    pub fn new(q: Option<&str>, set: Option<&str>) -> Self {
        let given = |value: Option<&str>| value.map(name_key).filter(|value| !value.is_empty());
        Self {
            name_contains: given(q),
            set: given(set),
        }
    }

    /// The rule as the memory store applies it (the PostgreSQL adapter states it in SQL).
    pub fn admits(&self, entry: &CollectionEntry) -> bool {
        self.name_contains
            .as_ref()
            .is_none_or(|part| name_key(&entry.card.name).contains(part.as_str()))
            && self.set.as_ref().is_none_or(|set| entry.card.set == *set)
    }
}

/// One page of a user's collection of a game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionQuery {
    pub owner: UserId,
    pub game: String,
    pub filter: CollectionFilter,
    pub page: PageRequest,
}
