//! A game's whole catalog indexed in memory, answering the catalog port's three lookups
//! ([`CatalogRepository::find_printings`], [`cards_named`], [`preferred_printings`]) with the
//! port's own rules, for stores that keep a copy in process: the in-memory store, and the
//! PostgreSQL store's resident copy (resolving 1000 identifiers there was about 1,900 index
//! probes a request; docs/benchmarks.md). Built once from every card and printing of a game
//! and never changed: a store that changes the catalog builds a new one.
//!
//! [`CatalogRepository::find_printings`]: super::ports::CatalogRepository::find_printings
//! [`cards_named`]: super::ports::CatalogRepository::cards_named
//! [`preferred_printings`]: super::ports::CatalogRepository::preferred_printings

use std::collections::{BTreeSet, HashMap};

use uuid::Uuid;

use super::{CardName, CardPick, CatalogEntry, PrintingKeys};

#[derive(Debug, Default)]
pub struct CatalogIndex {
    printings: Vec<CatalogEntry>,
    by_variant: HashMap<Uuid, usize>,
    /// `catalog_a_id`, `catalog_b_id`, `catalog_c_id`.
    by_catalog: [HashMap<String, Vec<usize>>; 3],
    by_set_number: HashMap<(String, String), Vec<usize>>,
    cards: Vec<CardName>,
    /// Each name key and front face key → positions in `cards`.
    by_name: HashMap<String, Vec<usize>>,
    /// Each card's printings, most preferred first.
    by_card: HashMap<Uuid, Vec<usize>>,
}

impl CatalogIndex {
    /// Every card and every printing of one game. A printing appears once per variant id (the
    /// last one given wins); a card may have no printings (a re-import can move them all to
    /// another card) and is still found by name. The printings are kept in the vector given,
    /// not copied: they are most of the index, and building a second vector of them had the
    /// server's memory peak at about twice the index's size (docs/benchmarks.md).
    pub fn new(cards: Vec<CardName>, printings: impl IntoIterator<Item = CatalogEntry>) -> Self {
        let mut printings: Vec<CatalogEntry> = printings.into_iter().collect();
        let last_given: HashMap<Uuid, usize> = printings
            .iter()
            .enumerate()
            .map(|(position, entry)| (entry.printing.variant_id, position))
            .collect();
        let mut position = 0;
        printings.retain(|entry| {
            let kept = last_given.get(&entry.printing.variant_id) == Some(&position);
            position += 1;
            kept
        });
        drop(last_given);
        printings.shrink_to_fit();
        let mut index = Self {
            printings,
            ..Self::default()
        };
        for (slot, entry) in index.printings.iter().enumerate() {
            let printing = &entry.printing;
            index.by_variant.insert(printing.variant_id, slot);
            for (by_id, id) in index.by_catalog.iter_mut().zip(printing.catalog_ids()) {
                if let Some(id) = id {
                    by_id.entry(id.to_owned()).or_default().push(slot);
                }
            }
            index
                .by_set_number
                .entry((printing.set.clone(), printing.collector_number.clone()))
                .or_default()
                .push(slot);
            index
                .by_card
                .entry(printing.card_id)
                .or_default()
                .push(slot);
        }
        let printings = &index.printings;
        for slots in index.by_card.values_mut() {
            slots.sort_by_key(|&slot| printings[slot].preference_order());
        }
        for (position, card) in cards.iter().enumerate() {
            for key in [&card.name_key, &card.front_face_key] {
                let positions = index.by_name.entry(key.clone()).or_default();
                if positions.last() != Some(&position) {
                    positions.push(position);
                }
            }
        }
        index.cards = cards;
        index
    }

    fn entry(&self, slot: usize) -> &CatalogEntry {
        &self.printings[slot]
    }

    pub fn printings(&self) -> usize {
        self.printings.len()
    }

    pub fn cards(&self) -> usize {
        self.cards.len()
    }

    /// Every printing matching any key, each once, in no particular order.
    pub fn find_printings(&self, keys: &PrintingKeys) -> Vec<CatalogEntry> {
        let mut slots = BTreeSet::new();
        slots.extend(
            keys.variant_ids
                .iter()
                .filter_map(|id| self.by_variant.get(id)),
        );
        let wanted = [
            &keys.catalog_a_ids,
            &keys.catalog_b_ids,
            &keys.catalog_c_ids,
        ];
        for (by_id, ids) in self.by_catalog.iter().zip(wanted) {
            slots.extend(ids.iter().filter_map(|id| by_id.get(id)).flatten());
        }
        for (set, number) in &keys.set_numbers {
            // A borrowed pair cannot look up an owned one, and the key is small.
            let key = (set.clone(), number.clone());
            slots.extend(self.by_set_number.get(&key).into_iter().flatten());
        }
        slots
            .into_iter()
            .map(|slot| self.entry(slot).clone())
            .collect()
    }

    /// Every card whose name key or front face key is among `name_keys`, each once.
    pub fn cards_named(&self, name_keys: &[String]) -> Vec<CardName> {
        let positions: BTreeSet<usize> = name_keys
            .iter()
            .filter_map(|key| self.by_name.get(key))
            .flatten()
            .copied()
            .collect();
        positions
            .into_iter()
            .map(|position| self.cards[position].clone())
            .collect()
    }

    /// For each distinct pick, its card's most preferred printing within the pick's set when
    /// given ([`CatalogEntry::preference_order`]); picks with none are left out.
    pub fn preferred_printings(&self, picks: &[CardPick]) -> Vec<(CardPick, CatalogEntry)> {
        let distinct: BTreeSet<&CardPick> = picks.iter().collect();
        distinct
            .into_iter()
            .filter_map(|pick| {
                let slots = self.by_card.get(&pick.card_id)?;
                let entry = slots.iter().map(|&slot| self.entry(slot)).find(|entry| {
                    pick.set
                        .as_ref()
                        .is_none_or(|set| entry.printing.set == *set)
                })?;
                Some((pick.clone(), entry.clone()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use time::macros::date;

    use super::*;
    use crate::catalog::fixtures::entry;
    use crate::catalog::{Preference, name_key};

    fn card(id: u128, name: &str, front: &str) -> CardName {
        CardName {
            card_id: Uuid::from_u128(id),
            name_key: name_key(name),
            front_face_key: name_key(front),
        }
    }

    fn variants(entries: &[CatalogEntry]) -> BTreeSet<u128> {
        entries
            .iter()
            .map(|entry| entry.printing.variant_id.as_u128())
            .collect()
    }

    #[test]
    fn printings_are_found_by_every_key_each_once() {
        let mut with_ids = entry(1, 10, "abc", "1");
        with_ids.printing.catalog_a_id = Some("a1".into());
        with_ids.printing.catalog_b_id = Some("b1".into());
        with_ids.printing.catalog_c_id = Some("c1".into());
        let mut shared_id = entry(2, 20, "abc", "2");
        shared_id.printing.catalog_a_id = Some("a1".into());
        let index = CatalogIndex::new(Vec::new(), [with_ids, shared_id, entry(3, 30, "xyz", "1")]);

        let found = |keys: PrintingKeys| variants(&index.find_printings(&keys));
        let keys = PrintingKeys::default;
        assert_eq!(
            found(PrintingKeys {
                variant_ids: vec![Uuid::from_u128(3), Uuid::from_u128(99)],
                ..keys()
            }),
            BTreeSet::from([3])
        );
        assert_eq!(
            found(PrintingKeys {
                catalog_a_ids: vec!["a1".into()],
                ..keys()
            }),
            BTreeSet::from([1, 2])
        );
        assert_eq!(
            found(PrintingKeys {
                catalog_b_ids: vec!["b1".into(), "a1".into()],
                ..keys()
            }),
            BTreeSet::from([1])
        );
        assert_eq!(
            found(PrintingKeys {
                catalog_c_ids: vec!["c1".into()],
                ..keys()
            }),
            BTreeSet::from([1])
        );
        assert_eq!(
            found(PrintingKeys {
                set_numbers: vec![("abc".into(), "2".into()), ("xyz".into(), "2".into())],
                ..keys()
            }),
            BTreeSet::from([2])
        );
        // Found by three keys at once, returned once.
        let all = index.find_printings(&PrintingKeys {
            variant_ids: vec![Uuid::from_u128(1)],
            catalog_a_ids: vec!["a1".into()],
            set_numbers: vec![("abc".into(), "1".into())],
            ..keys()
        });
        assert_eq!(all.len(), 2);
        assert!(index.find_printings(&keys()).is_empty());
    }

    #[test]
    fn a_repeated_variant_keeps_the_last_and_is_indexed_once() {
        let old = entry(1, 10, "old", "1");
        let new = entry(1, 10, "new", "1");
        let index = CatalogIndex::new(Vec::new(), [old, new]);
        assert_eq!(index.printings(), 1);
        let by_set = |set: &str| {
            index.find_printings(&PrintingKeys {
                set_numbers: vec![(set.into(), "1".into())],
                ..PrintingKeys::default()
            })
        };
        assert!(by_set("old").is_empty());
        assert_eq!(by_set("new").len(), 1);
    }

    #[test]
    fn cards_are_found_by_name_or_front_face_each_once() {
        let cards = vec![
            card(1, "Fire // Ice", "Fire"),
            card(2, "Fire", "Fire"),
            card(3, "Bolt", "Bolt"),
            // No printings left: still found by name, as the database finds it.
            card(4, "Orphan", "Orphan"),
        ];
        let index = CatalogIndex::new(cards, [entry(1, 1, "a", "1")]);
        let named = |keys: &[&str]| -> BTreeSet<u128> {
            let keys: Vec<String> = keys.iter().map(|key| (*key).to_owned()).collect();
            index
                .cards_named(&keys)
                .iter()
                .map(|card| card.card_id.as_u128())
                .collect()
        };
        assert_eq!(named(&["fire"]), BTreeSet::from([1, 2]));
        assert_eq!(named(&["fire // ice", "bolt"]), BTreeSet::from([1, 3]));
        assert_eq!(named(&["orphan", "nothing"]), BTreeSet::from([4]));
        assert_eq!(index.cards_named(&["fire".into(), "fire".into()]).len(), 2);
    }

    #[test]
    fn the_preferred_printing_follows_the_documented_order_within_a_set() {
        let mut promo = entry(1, 10, "new", "1");
        promo.preference = Preference::Promo;
        promo.released_at = Some(date!(2024 - 01 - 01));
        let mut undated = entry(2, 10, "abc", "2");
        undated.released_at = None;
        let older = entry(3, 10, "abc", "3");
        let mut newer = entry(5, 10, "old", "4");
        newer.released_at = Some(date!(2020 - 01 - 01));
        // Same date as `newer`: the lower variant id wins.
        let mut twin = entry(4, 10, "twin", "5");
        twin.released_at = Some(date!(2020 - 01 - 01));
        let index = CatalogIndex::new(Vec::new(), [promo, undated, older, newer, twin]);

        let pick = |set: Option<&str>| CardPick {
            card_id: Uuid::from_u128(10),
            set: set.map(str::to_owned),
        };
        let preferred = |picks: &[CardPick]| -> BTreeMap<Option<String>, u128> {
            index
                .preferred_printings(picks)
                .into_iter()
                .map(|(pick, entry)| (pick.set, entry.printing.variant_id.as_u128()))
                .collect()
        };
        let answer = preferred(&[
            pick(None),
            pick(None),
            pick(Some("abc")),
            pick(Some("new")),
            pick(Some("none")),
        ]);
        assert_eq!(
            answer,
            BTreeMap::from([
                (None, 4),
                (Some("abc".to_owned()), 3),
                (Some("new".to_owned()), 1),
            ])
        );
        assert_eq!(
            index.preferred_printings(&[pick(None), pick(None)]).len(),
            1
        );
        let unknown = CardPick {
            card_id: Uuid::from_u128(99),
            set: None,
        };
        assert!(index.preferred_printings(&[unknown]).is_empty());
    }
}
