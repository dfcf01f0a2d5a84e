//! The rules and card clauses the games ship with, as the migrations seed them
//! (`migrations/2026-11-26-000100_format_checks` for `mtg`, `2026-11-28-000500_fab_rules` for
//! `fab`). The memory store seeds the same values, and the repository contract suite holds
//! both stores to them.

use super::deck_rules::{
    CardTextRules, CommanderRules, CopyAllowance, FormatRules, HeroRules, PartnerAbility,
};

/// The deck rules of a format of `game`, `None` for a format shipped without rules.
pub fn format_rules(game: &str, slug: &str) -> Option<FormatRules> {
    match game {
        "mtg" => mtg_rules(slug),
        "fab" => fab_rules(slug),
        _ => None,
    }
}

/// The deck rules of an `mtg` format, `None` for a format shipped without rules.
pub fn mtg_rules(slug: &str) -> Option<FormatRules> {
    let constructed = FormatRules {
        main_section: "mainboard".into(),
        main_min: 60,
        main_max: None,
        sideboard_max: Some(15),
        copy_limit: 4,
        singleton: false,
        commander: None,
        pool_max: None,
        hero: None,
    };
    match slug {
        "standard" | "pioneer" | "modern" | "legacy" | "vintage" | "pauper" => Some(constructed),
        "commander" => Some(FormatRules {
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
            ..constructed
        }),
        _ => None,
    }
}

/// The deck rules of a `fab` format (contract, "A second game: Flesh and Blood"; the numbers
/// are Legend Story Studios' tournament rules for Classic Constructed and Blitz), `None` for
/// the formats shipped with legality only.
pub fn fab_rules(slug: &str) -> Option<FormatRules> {
    let rules = |young: bool, main_min: u32, main_max: Option<u32>, pool_max: u32, copies: u32| {
        FormatRules {
            main_section: "deck".into(),
            main_min,
            main_max,
            sideboard_max: None,
            copy_limit: copies,
            singleton: false,
            commander: None,
            pool_max: Some(pool_max),
            hero: Some(HeroRules { young }),
        }
    };
    match slug {
        "cc" => Some(rules(false, 60, None, 80, 3)),
        "blitz" => Some(rules(true, 40, Some(40), 52, 2)),
        _ => None,
    }
}

/// Cards whose rules text changes how a deck may hold them, for catalog files without
/// `oracle_text` (the bundled 2019 file): by name.
pub fn mtg_text_rules() -> Vec<(&'static str, CardTextRules)> {
    let any = CardTextRules {
        copies: CopyAllowance::Any,
        ..CardTextRules::default()
    };
    let commander = CardTextRules {
        can_be_commander: true,
        ..CardTextRules::default()
    };
    let partner = CardTextRules {
        partner: PartnerAbility::Any,
        ..CardTextRules::default()
    };
    let partner_with = |name: &str, can_be_commander: bool| CardTextRules {
        partner: PartnerAbility::With(super::name_key(name)),
        can_be_commander,
        ..CardTextRules::default()
    };
    let mut rules = vec![
        ("Relentless Rats", any.clone()),
        ("Rat Colony", any.clone()),
        ("Persistent Petitioners", any.clone()),
        ("Shadowborn Apostle", any.clone()),
        ("Dragon's Approach", any.clone()),
        ("Slime Against Humanity", any.clone()),
        (
            "Seven Dwarves",
            CardTextRules {
                copies: CopyAllowance::UpTo(7),
                ..CardTextRules::default()
            },
        ),
        (
            "Nazgûl",
            CardTextRules {
                copies: CopyAllowance::UpTo(9),
                ..CardTextRules::default()
            },
        ),
        ("Daretti, Scrap Savant", commander.clone()),
        ("Freyalise, Llanowar's Fury", commander.clone()),
        ("Nahiri, the Lithomancer", commander.clone()),
        ("Ob Nixilis of the Black Oath", commander.clone()),
        ("Teferi, Temporal Archmage", commander.clone()),
    ];
    // Commander 2016's partners.
    for name in MTG_PARTNERS {
        rules.push((name, partner.clone()));
    }
    // Battlebond's legendary "Partner with" pairs (Will and Rowan Kenrith can also be
    // commanders, as their text says).
    for (a, b) in MTG_PARTNER_PAIRS {
        let walker = a.ends_with("Kenrith");
        rules.push((a, partner_with(b, walker)));
        rules.push((b, partner_with(a, walker)));
    }
    rules
}

/// The cards with Partner in the bundled 2019 file (all of Commander 2016's).
pub const MTG_PARTNERS: [&str; 15] = [
    "Akiri, Line-Slinger",
    "Bruse Tarl, Boorish Herder",
    "Ikra Shidiqi, the Usurper",
    "Ishai, Ojutai Dragonspeaker",
    "Kraum, Ludevic's Opus",
    "Kydele, Chosen of Kruphix",
    "Ludevic, Necro-Alchemist",
    "Ravos, Soultender",
    "Reyhan, Last of the Abzan",
    "Sidar Kondo of Jamuraa",
    "Silas Renn, Seeker Adept",
    "Tana, the Bloodsower",
    "Thrasios, Triton Hero",
    "Tymna the Weaver",
    "Vial Smasher the Fierce",
];

/// The legendary "Partner with" pairs of the bundled 2019 file (Battlebond's).
pub const MTG_PARTNER_PAIRS: [(&str, &str); 6] = [
    ("Gorm the Great", "Virtus the Veiled"),
    ("Khorvath Brightflame", "Sylvia Brightspear"),
    ("Krav, the Unredeemed", "Regna, the Redeemer"),
    ("Okaun, Eye of Chaos", "Zndrsplt, Eye of Wisdom"),
    ("Pir, Imaginative Rascal", "Toothy, Imaginary Friend"),
    ("Rowan Kenrith", "Will Kenrith"),
];
