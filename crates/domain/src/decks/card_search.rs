//! Card search and card statistics (contract, "Card search and card statistics"): which decks
//! play a card, and how popular a card is and what it is played with. Each rule is here once:
//! what "a deck holds a card" means ([`counted_copies`]), the list filter over it
//! ([`DeckFilters::admits_cards`]), and the figures of a card's statistics ([`CardUsage`],
//! [`CardStats::from_usage`]). The stores gather the raw usage; PostgreSQL keeps it in a table
//! refreshed at most [`STATS_MAX_AGE`] apart (docs/adr/0003-card-search-and-stats.md).

use std::collections::BTreeMap;
use std::sync::Arc;

use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::model::DeckCard;
use super::query::DeckFilters;
use crate::catalog::deck_rules::CardFacts;
use crate::catalog::{Format, Game};
use crate::validation::{FieldViolation, Violations};

/// At most this many card ids in `cards=` and in `excludeCards=` each.
pub const MAX_FILTER_CARDS: usize = 10;

/// How many cards "played with" names.
pub const PLAYED_WITH: usize = 20;

/// How many of the most often co-played cards a store hands over at least (with every card tied
/// with the last of them): enough that leaving out the basic lands still leaves the true
/// [`PLAYED_WITH`], ties by name included.
pub const PLAYED_WITH_CANDIDATES: usize = 70;

/// The figures of a card's statistics may be this old (the contract's lag of writes).
pub const STATS_MAX_AGE: Duration = Duration::seconds(60);

/// The copies of each card a deck holds in its counted sections, by card id, any printing:
/// what the card filters and the statistics read of a deck.
pub fn counted_copies(game: &Game, cards: &[DeckCard]) -> BTreeMap<Uuid, u32> {
    let mut copies = BTreeMap::new();
    for line in cards {
        if game
            .section(&line.section)
            .is_some_and(|section| section.counted)
        {
            *copies.entry(line.card.card_id).or_insert(0) += line.quantity;
        }
    }
    copies
}

/// A list of card ids as a query parameter gives it (`cards=a,b`), checked: each a UUID, at
/// most [`MAX_FILTER_CARDS`], duplicates dropped. Violations are reported under `field`.
pub fn parse_card_ids(field: &str, value: Option<&str>, v: &mut Violations) -> Vec<Uuid> {
    let Some(value) = value.filter(|value| !value.is_empty()) else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for part in value.split(',') {
        match Uuid::try_parse(part.trim()) {
            Ok(id) if !ids.contains(&id) => ids.push(id),
            Ok(_) => {}
            Err(_) => {
                v.push(FieldViolation::new(
                    field,
                    "invalid",
                    "must be card ids (UUIDs) separated by commas",
                ));
                return Vec::new();
            }
        }
    }
    if ids.len() > MAX_FILTER_CARDS {
        v.push(FieldViolation::new(
            field,
            "too_many",
            format!("at most {MAX_FILTER_CARDS} card ids"),
        ));
        return Vec::new();
    }
    ids
}

impl DeckFilters {
    /// Whether a deck holding `counted` (its [`counted_copies`]) passes the card filters: it
    /// holds every card of `cards` and none of `exclude_cards`.
    pub fn admits_cards(&self, counted: &BTreeMap<Uuid, u32>) -> bool {
        self.cards.iter().all(|card| counted.contains_key(card))
            && !self
                .exclude_cards
                .iter()
                .any(|card| counted.contains_key(card))
    }

    /// Whether the list filters on cards at all.
    pub fn filters_cards(&self) -> bool {
        !self.cards.is_empty() || !self.exclude_cards.is_empty()
    }

    /// Every card id the filters name (each once), which must all be cards of the game.
    pub fn named_cards(&self) -> Vec<Uuid> {
        let mut ids: Vec<Uuid> = self
            .cards
            .iter()
            .chain(&self.exclude_cards)
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// Which statistics to gather: of `card` among the public, non-archived decks of `game`, of
/// `format` only when given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CardStatsQuery {
    pub game: String,
    pub card: Uuid,
    pub format: Option<Uuid>,
}

/// A card's usage as a store gathers it: the raw counts behind [`CardStats`].
#[derive(Debug, Clone, PartialEq)]
pub struct CardUsage {
    /// Decks holding the card in a counted section.
    pub decks: u64,
    /// Every deck the query covers (the share's denominator).
    pub all_decks: u64,
    /// Copies of the card across those decks' counted sections.
    pub copies: u64,
    /// Cards in the same decks with the number of decks holding both, most first: at least
    /// the first [`PLAYED_WITH_CANDIDATES`] and every card tied with the last of them.
    pub played_with: Vec<(Uuid, u64)>,
    /// When these figures were gathered.
    pub as_of: OffsetDateTime,
}

impl CardUsage {
    /// The usage of `card` among `decks` (each deck's [`counted_copies`]), gathered `as_of`:
    /// what a store without its own aggregation computes.
    pub fn gather<'a>(
        card: Uuid,
        decks: impl IntoIterator<Item = &'a BTreeMap<Uuid, u32>>,
        as_of: OffsetDateTime,
    ) -> Self {
        let mut usage = Self {
            decks: 0,
            all_decks: 0,
            copies: 0,
            played_with: Vec::new(),
            as_of,
        };
        let mut together: BTreeMap<Uuid, u64> = BTreeMap::new();
        for deck in decks {
            usage.all_decks += 1;
            let Some(copies) = deck.get(&card) else {
                continue;
            };
            usage.decks += 1;
            usage.copies += u64::from(*copies);
            for other in deck.keys().filter(|other| **other != card) {
                *together.entry(*other).or_insert(0) += 1;
            }
        }
        usage.played_with = together.into_iter().collect();
        usage
            .played_with
            .sort_by(|(a_id, a), (b_id, b)| b.cmp(a).then(a_id.cmp(b_id)));
        usage
    }
}

/// One card played with another.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayedWith {
    pub card_id: Uuid,
    pub name: String,
    /// Decks holding both.
    pub decks: u64,
    /// `decks` over the decks holding the card the statistics are of.
    pub share: f64,
}

/// A card's statistics as the API answers them.
#[derive(Debug, Clone, PartialEq)]
pub struct CardStats {
    pub card_id: Uuid,
    pub name: String,
    pub format: Option<Format>,
    pub decks: u64,
    /// `decks` over all decks the statistics cover, 0 when there are none.
    pub share: f64,
    /// Copies per deck holding the card, 0 when none does.
    pub average_copies: f64,
    pub played_with: Vec<PlayedWith>,
    pub as_of: OffsetDateTime,
}

impl CardStats {
    /// The statistics of `card` from its `usage`, `facts` holding (at least) the facts of the
    /// cards it was played with: the [`PLAYED_WITH`] most often in the same decks, basic lands
    /// left out, ties by name, then id.
    pub fn from_usage(
        card: &CardFacts,
        format: Option<Format>,
        usage: CardUsage,
        facts: &[Arc<CardFacts>],
    ) -> Self {
        let by_id: BTreeMap<Uuid, &CardFacts> = facts
            .iter()
            .map(|facts| (facts.card_id, facts.as_ref()))
            .collect();
        let ratio = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            }
        };
        let mut played_with: Vec<PlayedWith> = usage
            .played_with
            .iter()
            .filter_map(|(id, decks)| {
                let facts = by_id.get(id)?;
                (!facts.is_basic_land()).then(|| PlayedWith {
                    card_id: *id,
                    name: facts.name.clone(),
                    decks: *decks,
                    share: ratio(*decks, usage.decks),
                })
            })
            .collect();
        played_with.sort_by(|a, b| {
            b.decks
                .cmp(&a.decks)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.card_id.cmp(&b.card_id))
        });
        played_with.truncate(PLAYED_WITH);
        Self {
            card_id: card.card_id,
            name: card.name.clone(),
            format,
            decks: usage.decks,
            share: ratio(usage.decks, usage.all_decks),
            average_copies: ratio(usage.copies, usage.decks),
            played_with,
            as_of: usage.as_of,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::deck_rules::CardTextRules;
    use crate::decks::CardSnapshot;
    use crate::decks::test_decks::mtg;

    fn card(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    fn line(section: &str, id: u128, quantity: u32) -> DeckCard {
        DeckCard {
            section: section.into(),
            quantity,
            foil: false,
            card: CardSnapshot {
                variant_id: Uuid::from_u128(id + 1000),
                card_id: card(id),
                name: format!("card {id}"),
                set: "set".into(),
                collector_number: "1".into(),
                type_line: "Instant".into(),
                image_url: None,
                colors: vec![],
            },
        }
    }

    fn facts(id: u128, name: &str, type_line: &str) -> CardFacts {
        CardFacts {
            card_id: card(id),
            name: name.into(),
            type_line: type_line.into(),
            color_identity: vec![],
            text: CardTextRules::default(),
            legalities: Default::default(),
        }
    }

    #[test]
    fn only_counted_sections_hold_a_card_and_their_copies_add_up() {
        let copies = counted_copies(
            &mtg(),
            &[
                line("mainboard", 1, 3),
                line("sideboard", 1, 1),
                line("maybeboard", 2, 4),
                line("commander", 3, 1),
            ],
        );
        assert_eq!(copies, BTreeMap::from([(card(1), 4), (card(3), 1)]));
    }

    #[test]
    fn card_filters_need_every_card_and_none_of_the_excluded() {
        let deck = BTreeMap::from([(card(1), 4), (card(2), 1)]);
        let filters = |cards: &[u128], exclude: &[u128]| DeckFilters {
            cards: cards.iter().copied().map(card).collect(),
            exclude_cards: exclude.iter().copied().map(card).collect(),
            ..DeckFilters::default()
        };
        assert!(filters(&[], &[]).admits_cards(&deck));
        assert!(filters(&[1, 2], &[]).admits_cards(&deck));
        assert!(!filters(&[1, 3], &[]).admits_cards(&deck));
        assert!(filters(&[1], &[3]).admits_cards(&deck));
        assert!(!filters(&[1], &[2]).admits_cards(&deck));
        assert!(!filters(&[], &[2]).admits_cards(&deck));
    }

    #[test]
    fn card_id_lists_are_uuids_ten_at_most() {
        let mut v = Violations::default();
        let ids = parse_card_ids(
            "cards",
            Some(&format!("{}, {},{}", card(1), card(2), card(1))),
            &mut v,
        );
        assert_eq!(ids, vec![card(1), card(2)]);
        assert!(v.0.is_empty());
        assert!(parse_card_ids("cards", Some(""), &mut v).is_empty());
        assert!(v.0.is_empty());
        parse_card_ids("cards", Some("nope"), &mut v);
        let eleven: Vec<String> = (1..=11).map(|n| card(n).to_string()).collect();
        parse_card_ids("excludeCards", Some(&eleven.join(",")), &mut v);
        let fields: Vec<(&str, &str)> =
            v.0.iter()
                .map(|violation| (violation.field.as_str(), violation.code))
                .collect();
        assert_eq!(
            fields,
            vec![("cards", "invalid"), ("excludeCards", "too_many")]
        );
    }

    #[test]
    fn usage_counts_decks_copies_and_cards_played_together() {
        let decks = [
            BTreeMap::from([(card(1), 4), (card(2), 1), (card(3), 2)]),
            BTreeMap::from([(card(1), 2), (card(3), 1)]),
            BTreeMap::from([(card(2), 1)]),
            BTreeMap::new(),
        ];
        let usage = CardUsage::gather(card(1), &decks, OffsetDateTime::UNIX_EPOCH);
        assert_eq!((usage.decks, usage.all_decks, usage.copies), (2, 4, 6));
        assert_eq!(usage.played_with, vec![(card(3), 2), (card(2), 1)]);
    }

    #[test]
    fn stats_leave_basic_lands_out_break_ties_by_name_and_keep_twenty() {
        let target = facts(1, "Lightning Bolt", "Instant");
        let mut facts_list = vec![facts(2, "Mountain", "Basic Land — Mountain")];
        let mut played_with = vec![(card(2), 10)];
        // 25 cards in 5 decks each, named so that their ids and names order differently.
        for n in 0..25u128 {
            facts_list.push(facts(100 + n, &format!("Card {:02}", 24 - n), "Creature"));
            played_with.push((card(100 + n), 5));
        }
        facts_list.push(facts(200, "Zealous Conscripts", "Creature"));
        played_with.insert(1, (card(200), 8));
        let usage = CardUsage {
            decks: 10,
            all_decks: 40,
            copies: 35,
            played_with,
            as_of: OffsetDateTime::UNIX_EPOCH,
        };
        let facts_list: Vec<Arc<CardFacts>> = facts_list.into_iter().map(Arc::new).collect();
        let stats = CardStats::from_usage(&target, None, usage, &facts_list);
        assert_eq!(stats.name, "Lightning Bolt");
        assert_eq!(
            (stats.decks, stats.share, stats.average_copies),
            (10, 0.25, 3.5)
        );
        assert_eq!(stats.played_with.len(), PLAYED_WITH);
        assert_eq!(stats.played_with[0].name, "Zealous Conscripts");
        assert_eq!(stats.played_with[0].share, 0.8);
        assert_eq!(stats.played_with[1].name, "Card 00");
        assert_eq!(stats.played_with[19].name, "Card 18");
        assert!(stats.played_with.iter().all(|card| card.name != "Mountain"));
    }

    #[test]
    fn stats_of_an_unplayed_card_are_zero_not_undefined() {
        let usage = CardUsage::gather(card(1), &[BTreeMap::new()], OffsetDateTime::UNIX_EPOCH);
        let stats = CardStats::from_usage(&facts(1, "Unplayed", "Instant"), None, usage, &[]);
        assert_eq!(
            (stats.decks, stats.share, stats.average_copies),
            (0, 0.0, 0.0)
        );
        assert!(stats.played_with.is_empty());
    }
}
