//! The check, rule by rule, over real cards of `default-cards-2019.jsonl.gz` (their oracle
//! ids, type lines, colour identities and legalities as that file has them), no database.

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;
use time::macros::datetime;
use uuid::Uuid;

use super::*;
use crate::catalog::{Format, Game, Section, format_id};

const NOW: OffsetDateTime = datetime!(2026-11-26 00:00 UTC);

fn game() -> Game {
    let section = |key: &str, counted: bool| Section {
        key: key.into(),
        label: key.into(),
        counted,
        featured_slot: None,
    };
    Game {
        slug: "mtg".into(),
        name: "Magic".into(),
        sections: vec![
            section("commander", true),
            section("companion", true),
            section("mainboard", true),
            section("sideboard", true),
            section("maybeboard", false),
        ],
        colors: ["W", "U", "B", "R", "G"].map(str::to_owned).to_vec(),
    }
}

fn constructed() -> FormatRules {
    FormatRules {
        main_section: "mainboard".into(),
        main_min: 60,
        main_max: None,
        sideboard_max: Some(15),
        copy_limit: 4,
        singleton: false,
        commander: None,
        pool_max: None,
        hero: None,
    }
}

fn commander_rules() -> FormatRules {
    FormatRules {
        main_section: "mainboard".into(),
        main_min: 0,
        main_max: None,
        sideboard_max: Some(0),
        copy_limit: 1,
        singleton: true,
        commander: Some(CommanderRules {
            count_max: 2,
            deck_size: 100,
            color_identity: true,
        }),
        pool_max: None,
        hero: None,
    }
}

fn format(slug: &str, rules: &FormatRules) -> Format {
    Format {
        id: format_id("mtg", slug),
        slug: slug.into(),
        name: slug.to_uppercase(),
        rules: Some(rules.clone()),
    }
}

/// A card as the 2019 file has it: (oracle id, name, type line, colour identity, legalities in
/// standard, modern, legacy, vintage, pauper, commander).
fn card(id: &str, name: &str, type_line: &str, identity: &str, legal: [&str; 6]) -> CardFacts {
    let formats = [
        "standard",
        "modern",
        "legacy",
        "vintage",
        "pauper",
        "commander",
    ];
    CardFacts {
        card_id: Uuid::parse_str(id).unwrap(),
        name: name.into(),
        type_line: type_line.into(),
        color_identity: identity.chars().map(String::from).collect(),
        text: CardTextRules::default(),
        legalities: std::sync::Arc::new(
            formats
                .iter()
                .zip(legal)
                .map(|(format, status)| {
                    (
                        (*format).to_owned(),
                        vec![LegalityChange::recorded(
                            datetime!(2019-06-01 00:00 UTC),
                            Legality::parse(status).unwrap(),
                        )],
                    )
                })
                .collect(),
        ),
    }
}

const L: &str = "legal";
const N: &str = "not_legal";
const B: &str = "banned";
const R: &str = "restricted";

fn island() -> CardFacts {
    card(
        "b2c6aa39-2d2a-459c-a555-fb48ba993373",
        "Island",
        "Basic Land — Island",
        "U",
        [L, L, L, L, L, L],
    )
}
fn snow_island() -> CardFacts {
    card(
        "5b2460a5-6ae5-4cad-ba94-1a9e98e6e4c0",
        "Snow-Covered Island",
        "Basic Snow Land — Island",
        "U",
        [N, L, L, L, L, L],
    )
}
fn bolt() -> CardFacts {
    card(
        "4457ed35-7c10-48c8-9776-456485fdf070",
        "Lightning Bolt",
        "Instant",
        "R",
        [N, L, L, L, L, L],
    )
}
fn ponder() -> CardFacts {
    card(
        "02090581-61aa-4348-ad57-451be8ee91c2",
        "Ponder",
        "Sorcery",
        "U",
        [N, B, L, R, L, L],
    )
}
fn birthing_pod() -> CardFacts {
    card(
        "f8b9dd54-0837-47f4-ad14-7a0322d46d5f",
        "Birthing Pod",
        "Artifact",
        "G",
        [N, B, L, L, N, L],
    )
}
fn sol_ring() -> CardFacts {
    card(
        "6ad8011d-3471-4369-9d68-b264cc027487",
        "Sol Ring",
        "Artifact",
        "",
        [N, N, B, R, N, L],
    )
}
fn tarmogoyf() -> CardFacts {
    card(
        "45900b2f-f6a9-4c42-9642-008f3c1cf6dd",
        "Tarmogoyf",
        "Creature — Lhurgoyf",
        "G",
        [N, L, L, L, N, L],
    )
}
fn relentless_rats() -> CardFacts {
    let mut rats = card(
        "104ea189-14cd-420f-afdc-57b0f827ab8e",
        "Relentless Rats",
        "Creature — Rat",
        "B",
        [N, L, L, L, L, L],
    );
    rats.text = text_rules("A deck can have any number of cards named Relentless Rats.");
    rats
}
fn seven_dwarves() -> CardFacts {
    // The 2019 file's printing is not legal anywhere; its later printings are.
    let mut dwarves = card(
        "526ca4a9-3f50-4f7a-8169-2bda95792401",
        "Seven Dwarves",
        "Creature — Dwarf",
        "R",
        [N, L, L, L, L, L],
    );
    dwarves.text = text_rules("A deck can have up to seven cards named Seven Dwarves.");
    dwarves
}
fn daretti() -> CardFacts {
    let mut daretti = card(
        "ea9f4de3-fc35-435a-8dff-a5657d14a9bd",
        "Daretti, Scrap Savant",
        "Legendary Planeswalker — Daretti",
        "R",
        [N, N, L, L, N, L],
    );
    daretti.text = text_rules("Daretti, Scrap Savant can be your commander.");
    daretti
}
fn jace() -> CardFacts {
    card(
        "7f77a84e-5a4b-4834-aefa-3cecc175ae8e",
        "Jace, the Mind Sculptor",
        "Legendary Planeswalker — Jace",
        "U",
        [N, L, L, L, N, L],
    )
}
fn krenko() -> CardFacts {
    card(
        "68418069-f615-40ef-ae0d-764192acae00",
        "Krenko, Mob Boss",
        "Legendary Creature — Goblin Warrior",
        "R",
        [N, L, L, L, N, L],
    )
}
fn thalia() -> CardFacts {
    card(
        "9b7f1d05-707c-4ed3-9f0e-8ced1232c2ee",
        "Thalia, Guardian of Thraben",
        "Legendary Creature — Human Soldier",
        "W",
        [N, L, L, L, N, L],
    )
}
fn counterspell() -> CardFacts {
    card(
        "cc187110-1148-4090-bbb8-e205694a39f5",
        "Counterspell",
        "Instant",
        "U",
        [N, N, L, L, L, L],
    )
}
fn mountain(n: u128) -> CardFacts {
    // A stand-in for many different singleton cards: legal, red, no text.
    card(
        &Uuid::from_u128(0x1000 + n).to_string(),
        &format!("Red Card {n:03}"),
        "Sorcery",
        "R",
        [L, L, L, L, L, L],
    )
}

struct Deck {
    lines: Vec<CheckLine>,
    facts: HashMap<Uuid, Arc<CardFacts>>,
}

impl Deck {
    fn new() -> Self {
        Self {
            lines: Vec::new(),
            facts: HashMap::new(),
        }
    }

    fn add(mut self, section: &str, quantity: u32, card: CardFacts) -> Self {
        self.lines.push(CheckLine {
            section: section.into(),
            quantity,
            card_id: Some(card.card_id),
            name: card.name.clone(),
            place: String::new(),
        });
        self.facts.insert(card.card_id, Arc::new(card));
        self
    }

    fn main(self, quantity: u32, card: CardFacts) -> Self {
        self.add("mainboard", quantity, card)
    }

    fn check(&self, slug: &str, rules: &FormatRules) -> Vec<Problem> {
        check(
            &game(),
            &format(slug, rules),
            rules,
            &self.lines,
            &self.facts,
            NOW,
        )
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

/// 60 legal cards in modern: 4 bolts, 56 islands.
fn modern_base() -> Deck {
    Deck::new().main(4, bolt()).main(56, island())
}

#[test]
fn a_legal_modern_deck_has_no_problems() {
    let deck = modern_base().add("sideboard", 15, snow_island());
    assert_eq!(deck.check("modern", &constructed()), Vec::new());
}

#[test]
fn main_size_below_the_minimum_and_above_the_maximum() {
    let deck = Deck::new().main(4, bolt()).main(50, island());
    let problems = deck.check("modern", &constructed());
    assert_eq!(rules_of(&problems), [("main_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(54), Some(60)));
    assert_eq!(problems[0].section.as_deref(), Some("mainboard"));

    let capped = FormatRules {
        main_max: Some(60),
        ..constructed()
    };
    let problems = modern_base()
        .main(1, snow_island())
        .check("modern", &capped);
    assert_eq!(rules_of(&problems), [("main_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(61), Some(60)));
}

#[test]
fn sideboard_size_counts_the_companion_outside_commander() {
    let deck =
        modern_base()
            .add("sideboard", 15, snow_island())
            .add("companion", 1, relentless_rats());
    let problems = deck.check("modern", &constructed());
    assert_eq!(rules_of(&problems), [("sideboard_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(16), Some(15)));
}

#[test]
fn copy_limit_counts_every_counted_section_but_not_the_maybeboard() {
    let deck = modern_base()
        .add("sideboard", 1, bolt())
        .add("maybeboard", 10, bolt());
    let problems = deck.check("modern", &constructed());
    assert_eq!(
        rules_of(&problems),
        [("copy_limit", Some("Lightning Bolt"))]
    );
    assert_eq!((problems[0].count, problems[0].limit), (Some(5), Some(4)));
    assert_eq!(problems[0].section, None);
}

#[test]
fn basic_lands_and_any_number_cards_are_exempt_and_up_to_n_has_its_own_limit() {
    let deck = Deck::new()
        .main(20, island())
        .main(10, snow_island())
        .main(23, relentless_rats())
        .main(7, seven_dwarves());
    assert_eq!(deck.check("modern", &constructed()), Vec::new());

    let deck = Deck::new()
        .main(20, island())
        .main(32, relentless_rats())
        .main(8, seven_dwarves());
    let problems = deck.check("modern", &constructed());
    assert_eq!(rules_of(&problems), [("copy_limit", Some("Seven Dwarves"))]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(8), Some(7)));
}

#[test]
fn a_card_banned_in_modern() {
    let problems = modern_base()
        .main(1, ponder())
        .main(1, birthing_pod())
        .check("modern", &constructed());
    assert_eq!(
        rules_of(&problems),
        [("banned", Some("Birthing Pod")), ("banned", Some("Ponder"))]
    );
}

#[test]
fn restricted_in_vintage_allows_one_copy() {
    let one = Deck::new()
        .main(56, island())
        .main(1, sol_ring())
        .main(3, ponder());
    assert_eq!(
        rules_of(&one.check("vintage", &constructed())),
        [("restricted", Some("Ponder"))]
    );
    let problems = one.check("vintage", &constructed());
    assert_eq!((problems[0].count, problems[0].limit), (Some(3), Some(1)));
    let fine = Deck::new()
        .main(58, island())
        .main(1, sol_ring())
        .main(1, ponder());
    assert_eq!(fine.check("vintage", &constructed()), Vec::new());
}

#[test]
fn a_rare_in_pauper_is_not_legal() {
    let problems = modern_base()
        .main(4, tarmogoyf())
        .check("pauper", &constructed());
    assert_eq!(rules_of(&problems), [("not_legal", Some("Tarmogoyf"))]);
}

/// Unknown is not illegal: no record for the format (a file older than the format) is its
/// own problem, and its message says so.
#[test]
fn a_format_the_card_has_no_record_for_is_a_legality_unknown_problem() {
    let mut goyf = tarmogoyf();
    std::sync::Arc::make_mut(&mut goyf.legalities).clear();
    let problems = modern_base().main(4, goyf).check("modern", &constructed());
    assert_eq!(
        rules_of(&problems),
        [("legality_unknown", Some("Tarmogoyf"))]
    );
    assert_eq!((problems[0].count, problems[0].limit), (Some(4), None));
    assert!(
        problems[0]
            .message
            .contains("no legality in MODERN is recorded"),
        "{}",
        problems[0].message
    );
}

/// Before a card's first record, an announcement's "before" applies, not its "after".
#[test]
fn before_the_first_record_the_announced_before_status_applies() {
    let mut goyf = tarmogoyf();
    std::sync::Arc::make_mut(&mut goyf.legalities).insert(
        "modern".into(),
        vec![LegalityChange {
            from: datetime!(2019-08-30 00:00 UTC),
            status: Legality::Banned,
            before: Some(Legality::Legal),
        }],
    );
    assert_eq!(
        goyf.legality("modern", datetime!(2019-01-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(
        goyf.legality("modern", datetime!(2019-08-30 00:00 UTC)),
        Some(Legality::Banned)
    );
    // An imported record has no "before": its own status applies before it.
    std::sync::Arc::make_mut(&mut goyf.legalities).insert(
        "legacy".into(),
        vec![LegalityChange::recorded(
            datetime!(2019-04-01 00:00 UTC),
            Legality::Banned,
        )],
    );
    assert_eq!(
        goyf.legality("legacy", datetime!(2019-01-01 00:00 UTC)),
        Some(Legality::Banned)
    );
}

/// 100 red singleton cards with Krenko as commander: 1 commander + 99.
fn commander_deck(commander: CardFacts) -> Deck {
    let mut deck = Deck::new()
        .add("commander", 1, commander)
        .main(40, mountain_basic());
    for n in 0..59 {
        deck = deck.main(1, mountain(n));
    }
    deck
}

fn mountain_basic() -> CardFacts {
    card(
        "a3fb7228-e76b-4e96-a40e-20b5fed75685",
        "Mountain",
        "Basic Land — Mountain",
        "R",
        [L, L, L, L, L, L],
    )
}

#[test]
fn a_legal_commander_deck_and_a_planeswalker_that_can_be_a_commander() {
    assert_eq!(
        commander_deck(krenko()).check("commander", &commander_rules()),
        Vec::new()
    );
    assert_eq!(
        commander_deck(daretti()).check("commander", &commander_rules()),
        Vec::new()
    );
}

#[test]
fn a_planeswalker_without_the_text_cannot_be_a_commander() {
    let mut deck = commander_deck(krenko());
    deck.lines[0].card_id = Some(jace().card_id);
    deck.lines[0].name = jace().name;
    deck.facts.insert(jace().card_id, Arc::new(jace()));
    let problems = deck.check("commander", &commander_rules());
    let rules = rules_of(&problems);
    assert!(
        rules.contains(&("commander", Some("Jace, the Mind Sculptor"))),
        "{rules:?}"
    );
    // Every red card is outside Jace's blue identity; basic Mountains too.
    let outside = rules
        .iter()
        .filter(|(rule, _)| *rule == "color_identity")
        .count();
    assert_eq!(outside, 60, "{rules:?}");
}

#[test]
fn commander_count_and_deck_size() {
    let deck =
        commander_deck(krenko())
            .add("commander", 1, daretti())
            .add("commander", 1, thalia());
    let problems = deck.check("commander", &commander_rules());
    assert_eq!(
        rules_of(&problems),
        [("commander", None), ("deck_size", None)]
    );
    assert_eq!((problems[0].count, problems[0].limit), (Some(3), Some(2)));
    assert_eq!(
        (problems[1].count, problems[1].limit),
        (Some(102), Some(100))
    );

    let no_commander = Deck::new().main(100, mountain_basic());
    assert_eq!(
        rules_of(&no_commander.check("commander", &commander_rules())),
        [("commander", None)]
    );
}

/// Two red commanders with `krenko`'s deck minus one Mountain.
fn two_commanders(first: CardFacts, second: CardFacts) -> Deck {
    let mut deck = Deck::new()
        .add("commander", 1, first)
        .add("commander", 1, second)
        .main(39, mountain_basic());
    for n in 0..59 {
        deck = deck.main(1, mountain(n));
    }
    deck
}

fn red_legend(id: &str, name: &str, partner: PartnerAbility) -> CardFacts {
    let mut legend = card(
        id,
        name,
        "Legendary Creature — Human",
        "R",
        [N, L, L, L, N, L],
    );
    legend.text.partner = partner;
    legend
}

#[test]
fn two_commanders_only_as_partners() {
    // Krenko beside Thalia (no Partner): the second is the problem.
    let mut thalia_red = thalia();
    thalia_red.color_identity = vec!["R".into()];
    let problems = two_commanders(krenko(), thalia_red).check("commander", &commander_rules());
    assert_eq!(
        rules_of(&problems),
        [("commander", Some("Thalia, Guardian of Thraben"))]
    );
    assert_eq!(problems[0].section.as_deref(), Some("commander"));

    let any = |id, name| red_legend(id, name, PartnerAbility::Any);
    let both = two_commanders(
        any("00000000-0000-4000-8000-000000000001", "Tymna the Weaver"),
        any(
            "00000000-0000-4000-8000-000000000002",
            "Thrasios, Triton Hero",
        ),
    );
    assert_eq!(both.check("commander", &commander_rules()), Vec::new());
    // Partner on one side only is not enough.
    let one = two_commanders(
        any("00000000-0000-4000-8000-000000000001", "Tymna the Weaver"),
        krenko(),
    );
    assert_eq!(
        rules_of(&one.check("commander", &commander_rules())),
        [("commander", Some("Krenko, Mob Boss"))]
    );
    let with =
        |id, name, other: &str| red_legend(id, name, PartnerAbility::With(other.to_lowercase()));
    let pair = two_commanders(
        with(
            "00000000-0000-4000-8000-000000000003",
            "Pir, Imaginative Rascal",
            "Toothy, Imaginary Friend",
        ),
        with(
            "00000000-0000-4000-8000-000000000004",
            "Toothy, Imaginary Friend",
            "Pir, Imaginative Rascal",
        ),
    );
    assert_eq!(pair.check("commander", &commander_rules()), Vec::new());
    // "Partner with" names one card only.
    let stranger = two_commanders(
        with(
            "00000000-0000-4000-8000-000000000003",
            "Pir, Imaginative Rascal",
            "Toothy, Imaginary Friend",
        ),
        any("00000000-0000-4000-8000-000000000001", "Tymna the Weaver"),
    );
    assert_eq!(
        rules_of(&stranger.check("commander", &commander_rules())),
        [("commander", Some("Tymna the Weaver"))]
    );
}

#[test]
fn a_commander_deck_has_no_sideboard() {
    let deck = commander_deck(krenko()).add("sideboard", 1, bolt());
    let problems = deck.check("commander", &commander_rules());
    assert_eq!(rules_of(&problems), [("sideboard_size", None)]);
    assert_eq!((problems[0].count, problems[0].limit), (Some(1), Some(0)));
    assert_eq!(
        seeds::mtg_rules("commander").unwrap().sideboard_max,
        Some(0)
    );
}

#[test]
fn partner_abilities_are_read_from_rules_text() {
    assert_eq!(
        text_rules("Partner (You can have two commanders if both have partner.)").partner,
        PartnerAbility::Any
    );
    assert_eq!(
        text_rules(
            "Flying\nPartner with Toothy, Imaginary Friend (When this creature enters the battlefield, target player may put Toothy into their hand from their library, then shuffle.)"
        )
        .partner,
        PartnerAbility::With("toothy, imaginary friend".into())
    );
    assert_eq!(
        text_rules("Whenever another creature you control dies, it deals damage to its partner.")
            .partner,
        PartnerAbility::None
    );
}

#[test]
fn singleton_and_a_card_outside_the_commanders_color_identity() {
    let deck = commander_deck(krenko())
        .main(2, bolt())
        .main(1, counterspell());
    let problems = deck.check("commander", &commander_rules());
    assert_eq!(
        rules_of(&problems),
        [
            ("color_identity", Some("Counterspell")),
            ("copy_limit", Some("Lightning Bolt")),
            ("deck_size", None),
        ]
    );
    // Two commanders combine their identities: Krenko (R) and Thalia (W) still lack blue.
    let partners = commander_deck(krenko()).add("commander", 1, thalia());
    assert!(
        partners
            .check("commander", &commander_rules())
            .iter()
            .all(|p| p.rule != Rule::ColorIdentity)
    );
}

#[test]
fn unresolved_entries_are_problems_and_maybeboard_is_never_checked() {
    let mut deck = modern_base().add("maybeboard", 9, birthing_pod());
    for (section, name) in [("sideboard", "Lightnig Bolt"), ("maybeboard", "Nothing")] {
        deck.lines.push(CheckLine {
            section: section.into(),
            quantity: 2,
            card_id: None,
            name: name.into(),
            place: "line 7".into(),
        });
    }
    let problems = deck.check("modern", &constructed());
    assert_eq!(rules_of(&problems), [("unresolved", None)]);
    assert_eq!(
        problems[0].message,
        "line 7: no card found for \"Lightnig Bolt\""
    );
    assert_eq!(problems[0].section.as_deref(), Some("sideboard"));
}

#[test]
fn problems_sort_by_rule_code_then_card_name_size_problems_first() {
    let deck = Deck::new()
        .main(5, ponder())
        .main(5, birthing_pod())
        .main(4, tarmogoyf());
    let problems = deck.check("modern", &constructed());
    assert_eq!(
        rules_of(&problems),
        [
            ("banned", Some("Birthing Pod")),
            ("banned", Some("Ponder")),
            ("copy_limit", Some("Birthing Pod")),
            ("copy_limit", Some("Ponder")),
            ("main_size", None),
        ]
    );
}

#[test]
fn legality_as_of_a_date_follows_the_history() {
    let mut pod = birthing_pod();
    std::sync::Arc::make_mut(&mut pod.legalities).insert(
        "modern".into(),
        vec![
            LegalityChange::recorded(datetime!(2019-06-01 00:00 UTC), Legality::Legal),
            LegalityChange::recorded(datetime!(2020-01-01 00:00 UTC), Legality::Banned),
        ],
    );
    assert_eq!(
        pod.legality("modern", datetime!(2019-12-31 23:59 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(
        pod.legality("modern", datetime!(2020-01-01 00:00 UTC)),
        Some(Legality::Banned)
    );
    // Before the first record, the first recorded legality applies.
    assert_eq!(
        pod.legality("modern", datetime!(2001-01-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(pod.legality("oldschool", NOW), None);

    let deck = modern_base().main(1, pod);
    let at = |as_of| {
        let rules = constructed();
        check(
            &game(),
            &format("modern", &rules),
            &rules,
            &deck.lines,
            &deck.facts,
            as_of,
        )
    };
    assert_eq!(at(datetime!(2019-07-01 00:00 UTC)), Vec::new());
    assert_eq!(rules_of(&at(NOW)), [("banned", Some("Birthing Pod"))]);
}

#[test]
fn a_missing_fact_counts_as_unresolved() {
    let mut deck = modern_base();
    deck.facts.remove(&bolt().card_id);
    let problems = deck.check("modern", &constructed());
    assert_eq!(rules_of(&problems), [("unresolved", None)]);
}

#[test]
fn rules_text_clauses() {
    assert_eq!(
        text_rules(
            "A deck can have any number of cards named Shadowborn Apostle.\n{B}, Sacrifice six..."
        )
        .copies,
        CopyAllowance::Any
    );
    assert_eq!(
        text_rules("A deck can have up to seven cards named Seven Dwarves.").copies,
        CopyAllowance::UpTo(7)
    );
    assert_eq!(
        text_rules("A deck can have up to 12 cards named X.").copies,
        CopyAllowance::UpTo(12)
    );
    let daretti =
        text_rules("+2: Discard up to two cards...\nDaretti, Scrap Savant can be your commander.");
    assert!(daretti.can_be_commander);
    assert_eq!(daretti.copies, CopyAllowance::Format);
    assert!(text_rules("Flying").is_default());
}

#[test]
fn basic_and_legendary_are_read_from_the_front_face_supertypes() {
    assert!(island().is_basic_land());
    assert!(snow_island().is_basic_land());
    assert!(!bolt().is_basic_land());
    assert!(krenko().can_be_commander());
    assert!(!jace().can_be_commander());
    assert!(daretti().can_be_commander());
    let mut mdfc = krenko();
    mdfc.type_line = "Legendary Creature — God // Legendary Artifact".into();
    assert!(mdfc.can_be_commander());
    mdfc.type_line = "Sorcery // Legendary Creature — Elf".into();
    assert!(!mdfc.can_be_commander());
}
