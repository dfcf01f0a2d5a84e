//! The rules and card clauses `mtg` ships with, as the migrations seed them
//! (`migrations/2026-11-26-000100_format_checks`). The memory store seeds the same values,
//! and the repository contract suite holds both stores to them.

use super::deck_rules::{CardTextRules, CommanderRules, CopyAllowance, FormatRules};

/// The deck rules of an `mtg` format, `None` for a format shipped without rules.
pub fn mtg_rules(slug: &str) -> Option<FormatRules> {
    let constructed = FormatRules {
        main_min: 60,
        main_max: None,
        sideboard_max: Some(15),
        copy_limit: 4,
        singleton: false,
        commander: None,
    };
    match slug {
        "standard" | "pioneer" | "modern" | "legacy" | "vintage" | "pauper" => Some(constructed),
        "commander" => Some(FormatRules {
            main_min: 0,
            main_max: None,
            sideboard_max: None,
            copy_limit: 1,
            singleton: true,
            commander: Some(CommanderRules {
                count_max: 2,
                deck_size: 100,
                color_identity: true,
            }),
        }),
        _ => None,
    }
}

/// Cards whose rules text changes how a deck may hold them, for catalog files without
/// `oracle_text` (the bundled 2019 file): by name.
pub fn mtg_text_rules() -> Vec<(&'static str, CardTextRules)> {
    let any = CardTextRules {
        copies: CopyAllowance::Any,
        can_be_commander: false,
    };
    let commander = CardTextRules {
        copies: CopyAllowance::Format,
        can_be_commander: true,
    };
    vec![
        ("Relentless Rats", any),
        ("Rat Colony", any),
        ("Persistent Petitioners", any),
        ("Shadowborn Apostle", any),
        ("Dragon's Approach", any),
        ("Slime Against Humanity", any),
        (
            "Seven Dwarves",
            CardTextRules {
                copies: CopyAllowance::UpTo(7),
                can_be_commander: false,
            },
        ),
        (
            "Nazgûl",
            CardTextRules {
                copies: CopyAllowance::UpTo(9),
                can_be_commander: false,
            },
        ),
        ("Daretti, Scrap Savant", commander),
        ("Freyalise, Llanowar's Fury", commander),
        ("Nahiri, the Lithomancer", commander),
        ("Ob Nixilis of the Black Oath", commander),
        ("Teferi, Temporal Archmage", commander),
    ]
}
