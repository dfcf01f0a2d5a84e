//! The check of `fab` decks, rule by rule, over real cards: the lines of
//! `@flesh-and-blood/cards` 3.8.6 the demo bundles (`crates/app/data/fab-demo.jsonl`), made
//! into facts by the `fab-cards` importer's own code, and the rules `seeds::fab_rules` ships.

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;
use time::macros::datetime;

use super::*;
use crate::catalog::source::{FabCard, fab_entries};
use crate::catalog::{FeaturedSlot, Format, Game, Section, format_id};

const SLICE: &str = include_str!("../../../app/data/fab-demo.jsonl");
const PACKAGE_DAY: OffsetDateTime = datetime!(2026-05-16 00:00 UTC);
const NOW: OffsetDateTime = datetime!(2026-11-28 00:00 UTC);

fn game() -> Game {
    let section = |key: &str, counted: bool| Section {
        key: key.into(),
        label: format!("{}{}", key[..1].to_uppercase(), &key[1..]),
        counted,
        featured_slot: (key == "hero").then_some(FeaturedSlot::Hero),
    };
    Game {
        slug: "fab".into(),
        name: "Flesh and Blood".into(),
        sections: vec![
            section("hero", true),
            section("arena", true),
            section("deck", true),
            section("inventory", true),
            section("maybeboard", false),
        ],
        colors: ["red", "yellow", "blue"].map(str::to_owned).to_vec(),
    }
}

/// Every card of the slice by its name (pitched: `Sink Below (red)`), as an import stores it.
fn cards() -> HashMap<String, CardFacts> {
    let game = game();
    let mut cards = HashMap::new();
    for line in SLICE.lines() {
        let card: FabCard = serde_json::from_str(line).unwrap();
        let entry = fab_entries(&game, card).unwrap().remove(0);
        let legalities = entry
            .legalities
            .iter()
            .map(|(format, status)| {
                let status = Legality::parse(status).unwrap();
                (
                    format.clone(),
                    vec![LegalityChange::recorded(PACKAGE_DAY, status)],
                )
            })
            .collect();
        let facts = CardFacts {
            card_id: entry.printing.card_id,
            name: entry.printing.name.clone(),
            type_line: entry.printing.type_line.clone(),
            color_identity: entry.color_identity.clone(),
            text: entry.text_rules.clone().unwrap_or_default(),
            legalities: std::sync::Arc::new(legalities),
        };
        cards.insert(facts.name.clone(), facts);
    }
    cards
}

fn format(slug: &str) -> (Format, FormatRules) {
    let rules = seeds::fab_rules(slug).unwrap();
    let name = match slug {
        "cc" => "Classic Constructed",
        _ => "Blitz",
    };
    let format = Format {
        id: format_id("fab", slug),
        slug: slug.into(),
        name: name.into(),
        rules: Some(rules.clone()),
    };
    (format, rules)
}

/// A deck by card name, in sections.
#[derive(Default, Clone)]
struct Deck(Vec<(String, u32, String)>);

impl Deck {
    fn with(mut self, section: &str, quantity: u32, name: &str) -> Self {
        self.0.push((section.into(), quantity, name.into()));
        self
    }

    /// The deck's lines, each resolved to the card of its name.
    fn lines(&self, cards: &HashMap<String, CardFacts>) -> Vec<CheckLine> {
        self.0
            .iter()
            .map(|(section, quantity, name)| CheckLine {
                section: section.clone(),
                quantity: *quantity,
                card_id: Some(cards[name].card_id),
                name: name.clone(),
                place: String::new(),
            })
            .collect()
    }

    fn check(&self, slug: &str) -> Vec<Problem> {
        let cards = cards();
        let lines = self.lines(&cards);
        let facts = cards
            .into_values()
            .map(|card| (card.card_id, Arc::new(card)))
            .collect();
        let (format, rules) = format(slug);
        check(&game(), &format, &rules, &lines, &facts, NOW)
    }
}

fn rules_of(problems: &[Problem]) -> Vec<(&'static str, Option<&str>)> {
    problems
        .iter()
        .map(|problem| {
            (
                problem.rule.as_str(),
                problem.card.as_ref().map(|card| card.name.as_str()),
            )
        })
        .collect()
}

/// The deck cards every Dorinthea deck here plays: 23 cards, 3 copies of each (69 cards).
const WARRIOR_DECK: [&str; 23] = [
    "Biting Blade (red)",
    "Biting Blade (yellow)",
    "Biting Blade (blue)",
    "Driving Blade (red)",
    "Driving Blade (yellow)",
    "Driving Blade (blue)",
    "Ironsong Response (red)",
    "Ironsong Response (yellow)",
    "Ironsong Response (blue)",
    "Overpower (red)",
    "Overpower (yellow)",
    "Sharpen Steel (red)",
    "Sharpen Steel (yellow)",
    "Sharpen Steel (blue)",
    "Steelblade Shunt (red)",
    "Steelblade Shunt (yellow)",
    "Steelblade Shunt (blue)",
    "Stroke of Foresight (red)",
    "Stroke of Foresight (blue)",
    "Warrior's Valor (red)",
    "Warrior's Valor (yellow)",
    "Sink Below (red)",
    "Sink Below (blue)",
];

/// The demo's deck (crates/app/src/demo.rs): Dorinthea Ironsong, her sword and two pieces of
/// equipment, 69 deck cards; a pool of 72.
fn dorinthea_cc() -> Deck {
    let deck = Deck::default()
        .with("hero", 1, "Dorinthea Ironsong")
        .with("arena", 1, "Dawnblade")
        .with("arena", 1, "Braveforge Bracers")
        .with("arena", 1, "Refraction Bolters");
    WARRIOR_DECK
        .iter()
        .fold(deck, |deck, name| deck.with("deck", 3, name))
}

/// Young Dorinthea in Blitz: her sword, 20 deck cards twice (40), a pool of 41.
fn dorinthea_blitz() -> Deck {
    let deck = Deck::default()
        .with("hero", 1, "Dorinthea")
        .with("arena", 1, "Dawnblade");
    WARRIOR_DECK[..20]
        .iter()
        .fold(deck, |deck, name| deck.with("deck", 2, name))
}

#[test]
fn the_demo_deck_is_legal_in_classic_constructed() {
    assert_eq!(dorinthea_cc().check("cc"), []);
}

#[test]
fn a_young_dorinthea_deck_is_legal_in_blitz() {
    assert_eq!(dorinthea_blitz().check("blitz"), []);
}

#[test]
fn copies_are_counted_per_name_and_pitch() {
    // 3 red and 3 blue Sink Below are two cards of 3 copies each.
    let problems = dorinthea_cc()
        .with("deck", 3, "Sink Below (yellow)")
        .check("cc");
    assert_eq!(problems, []);
    // A fourth red one is one too many, wherever it is.
    let problems = dorinthea_cc()
        .with("inventory", 1, "Sink Below (red)")
        .check("cc");
    assert_eq!(
        rules_of(&problems),
        [("copy_limit", Some("Sink Below (red)"))]
    );
    assert_eq!((problems[0].count, problems[0].limit), (Some(4), Some(3)));
    assert_eq!(
        problems[0].message,
        "4 copies of Sink Below (red); at most 3 allowed"
    );
    // Blitz allows 2.
    let problems = dorinthea_blitz()
        .with("inventory", 1, "Sharpen Steel (red)")
        .check("blitz");
    assert_eq!(
        rules_of(&problems),
        [("copy_limit", Some("Sharpen Steel (red)"))]
    );
    assert_eq!(problems[0].limit, Some(2));
}

/// The first `cards` of the deck section (3 copies each in cc, 2 in blitz).
fn shortened(mut deck: Deck, cards: usize) -> Deck {
    let first_deck_line = deck.0.iter().position(|(section, ..)| section == "deck");
    deck.0.truncate(first_deck_line.unwrap() + cards);
    deck
}

#[test]
fn the_deck_section_has_the_formats_size() {
    let problems = shortened(dorinthea_cc(), 19).check("cc");
    assert_eq!(rules_of(&problems), [("main_size", None)]);
    assert_eq!(problems[0].section.as_deref(), Some("deck"));
    assert_eq!((problems[0].count, problems[0].limit), (Some(57), Some(60)));
    assert_eq!(
        problems[0].message,
        "the deck has 57 cards; Classic Constructed needs at least 60"
    );
    // Blitz: exactly 40, neither fewer nor more.
    let problems = shortened(dorinthea_blitz(), 19).check("blitz");
    assert_eq!(rules_of(&problems), [("main_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(38), Some(40)));
    let problems = dorinthea_blitz()
        .with("deck", 1, "Sink Below (blue)")
        .check("blitz");
    assert_eq!(rules_of(&problems), [("main_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(41), Some(40)));
    // Cards in inventory are not in the deck.
    let problems = shortened(dorinthea_cc(), 19)
        .with("inventory", 3, "Sink Below (blue)")
        .check("cc");
    assert_eq!(rules_of(&problems), [("main_size", None)]);
}

#[test]
fn the_pool_counts_deck_arena_and_inventory_but_not_the_hero_or_maybeboard() {
    // 72 in the pool; 8 more in inventory is 80, the most Classic Constructed allows.
    let full = dorinthea_cc()
        .with("inventory", 3, "Overpower (blue)")
        .with("inventory", 3, "Stroke of Foresight (yellow)")
        .with("inventory", 2, "Warrior's Valor (blue)")
        .with("maybeboard", 9, "Alpha Rampage (red)");
    assert_eq!(full.check("cc"), []);
    let problems = full.with("arena", 1, "Warrior's Valor (blue)").check("cc");
    assert_eq!(rules_of(&problems), [("pool_size", None)]);
    assert_eq!(problems[0].section, None);
    assert_eq!((problems[0].count, problems[0].limit), (Some(81), Some(80)));
    assert_eq!(
        problems[0].message,
        "the card pool (arena, deck, inventory) has 81 cards; Classic Constructed allows at most 80"
    );
    // Blitz: 52.
    let mut blitz = dorinthea_blitz();
    let unplayed = [
        "Overpower (blue)",
        "Stroke of Foresight (yellow)",
        "Warrior's Valor (blue)",
    ];
    for name in WARRIOR_DECK[20..].iter().chain(&unplayed) {
        blitz = blitz.with("inventory", 2, name);
    }
    let problems = blitz.check("blitz");
    assert_eq!(rules_of(&problems), [("pool_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(53), Some(52)));
}

#[test]
fn a_deck_has_exactly_one_hero() {
    let without = Deck(dorinthea_cc().0[1..].to_vec());
    let problems = without.check("cc");
    assert_eq!(rules_of(&problems), [("hero", None)]);
    assert_eq!(problems[0].section.as_deref(), Some("hero"));
    assert_eq!((problems[0].count, problems[0].limit), (Some(0), Some(1)));
    assert_eq!(
        problems[0].message,
        "the deck has 0 heroes; Classic Constructed needs exactly 1"
    );

    let twice = dorinthea_cc().with("hero", 1, "Dorinthea Ironsong");
    let problems = twice.check("cc");
    assert_eq!(rules_of(&problems), [("hero", None)]);
    assert_eq!(problems[0].count, Some(2));

    // A card that is no hero is no hero in the hero section; a hero elsewhere is misplaced.
    let problems = Deck(dorinthea_cc().0[1..].to_vec())
        .with("hero", 1, "Dawnblade")
        .with("deck", 1, "Dorinthea Ironsong")
        .check("cc");
    assert_eq!(
        rules_of(&problems),
        [
            ("hero", Some("Dawnblade")),
            ("hero", Some("Dorinthea Ironsong")),
        ]
    );
    assert_eq!(problems[0].message, "Dawnblade is not a hero");
    assert_eq!(problems[1].section.as_deref(), Some("deck"));
}

#[test]
fn the_hero_is_adult_in_classic_constructed_and_young_in_blitz() {
    // Young Dorinthea leading a cc deck: the wrong age, and not legal in cc either.
    let mut young = dorinthea_cc();
    young.0[0].2 = "Dorinthea".into();
    let problems = young.check("cc");
    assert_eq!(
        rules_of(&problems),
        [
            ("hero", Some("Dorinthea")),
            ("not_legal", Some("Dorinthea"))
        ]
    );
    assert_eq!(
        problems[0].message,
        "Dorinthea is a young hero; Classic Constructed needs an adult hero"
    );
    assert_eq!(problems[0].section.as_deref(), Some("hero"));

    let mut adult = dorinthea_blitz();
    adult.0[0].2 = "Dorinthea Ironsong".into();
    let problems = adult.check("blitz");
    assert_eq!(
        rules_of(&problems),
        [
            ("hero", Some("Dorinthea Ironsong")),
            ("not_legal", Some("Dorinthea Ironsong"))
        ]
    );
    assert_eq!(
        problems[0].message,
        "Dorinthea Ironsong is an adult hero; Blitz needs a young hero"
    );
}

#[test]
fn every_card_must_name_the_heroes_base_name_among_its_legal_heroes() {
    // Alpha Rampage is a Brute card (Rhinar, Shiyana); Dorinthea Ironsong is hero
    // `Dorinthea`, the name her cards' legalHeroes use.
    let problems = dorinthea_cc()
        .with("inventory", 1, "Alpha Rampage (red)")
        .check("cc");
    assert_eq!(
        rules_of(&problems),
        [("hero_legality", Some("Alpha Rampage (red)"))]
    );
    assert_eq!(
        problems[0].message,
        "Alpha Rampage (red) is not legal in a deck of Dorinthea Ironsong (Dorinthea): \
         its legal heroes do not name Dorinthea"
    );
    // Her young self is the same hero for her cards.
    let problems = dorinthea_blitz()
        .with("inventory", 1, "Alpha Rampage (red)")
        .check("blitz");
    assert_eq!(
        rules_of(&problems),
        [("hero_legality", Some("Alpha Rampage (red)"))]
    );
    // Maybeboard is never checked.
    let problems = dorinthea_cc()
        .with("maybeboard", 1, "Alpha Rampage (red)")
        .check("cc");
    assert_eq!(problems, []);
    // Without one hero, no card is checked against a hero.
    let problems = Deck(dorinthea_cc().0[1..].to_vec())
        .with("inventory", 1, "Alpha Rampage (red)")
        .check("cc");
    assert_eq!(rules_of(&problems), [("hero", None)]);
}

#[test]
fn banned_and_not_legal_cards_come_from_the_package() {
    let problems = dorinthea_cc()
        .with("inventory", 1, "Art of War (yellow)")
        .check("cc");
    assert_eq!(
        rules_of(&problems),
        [("banned", Some("Art of War (yellow)"))]
    );
    assert_eq!(
        problems[0].message,
        "Art of War (yellow) is banned in Classic Constructed"
    );
    // Arakni is a young hero legal in Blitz only, and the wrong hero for Warrior cards.
    let mut arakni = dorinthea_cc();
    arakni.0[0].2 = "Arakni".into();
    let codes: Vec<&str> = arakni
        .check("cc")
        .iter()
        .map(|problem| problem.rule.as_str())
        .collect();
    assert_eq!(&codes[..2], ["hero", "hero_legality"]);
    assert_eq!(codes.last(), Some(&"not_legal"));
}

#[test]
fn hero_facts_come_from_the_package_fields() {
    // `hero` names the hero; a hero's printed name can differ from it entirely.
    let card: FabCard = serde_json::from_value(serde_json::json!({
        "cardIdentifier": "bravo-star-of-the-show", "name": "Bravo, Star of the Show",
        "types": ["Hero"], "hero": "Starvo", "legalHeroes": ["Starvo"],
        "printings": [{"identifier": "EVR017", "print": "EVR017"}]
    }))
    .unwrap();
    let rules = fab_entries(&game(), card).unwrap()[0]
        .text_rules
        .clone()
        .unwrap();
    assert_eq!(
        rules.hero,
        Some(HeroCard {
            name: "Starvo".into(),
            young: false
        })
    );
    assert_eq!(rules.legal_heroes, ["Starvo"]);
    let cards = cards();
    assert_eq!(
        cards["Dorinthea"].text.hero,
        Some(HeroCard {
            name: "Dorinthea".into(),
            young: true
        })
    );
    assert_eq!(cards["Sink Below (red)"].text.hero, None);
    assert!(cards["Sink Below (red)"].text.legal_heroes.len() > 50);
}

#[test]
fn restricted_and_unknown_legalities_read_as_for_every_game() {
    // The package restricts cards in Living Legend only; were Sink Below (red) restricted in
    // cc, or had no cc legality recorded, the check would say so as it does for mtg.
    let lines = dorinthea_cc().lines(&cards());
    let (format, rules) = format("cc");
    let with = |change: &dyn Fn(&mut CardFacts)| {
        let mut cards = cards();
        change(cards.get_mut("Sink Below (red)").unwrap());
        let facts = cards
            .into_values()
            .map(|card| (card.card_id, Arc::new(card)))
            .collect();
        check(&game(), &format, &rules, &lines, &facts, NOW)
    };
    let problems = with(&|card| {
        std::sync::Arc::make_mut(&mut card.legalities).insert(
            "cc".into(),
            vec![LegalityChange::recorded(PACKAGE_DAY, Legality::Restricted)],
        );
    });
    assert_eq!(
        rules_of(&problems),
        [("restricted", Some("Sink Below (red)"))]
    );
    assert_eq!((problems[0].count, problems[0].limit), (Some(3), Some(1)));
    let problems = with(&|card| {
        std::sync::Arc::make_mut(&mut card.legalities).remove("cc");
    });
    assert_eq!(
        rules_of(&problems),
        [("legality_unknown", Some("Sink Below (red)"))]
    );
}
