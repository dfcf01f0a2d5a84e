//! Two tournament-sized decks of real cards from the 2019 Scryfall file, for the format
//! check's cost test and benchmark: a legal 100-card commander deck (Atraxa and 99 singletons in
//! her colours) and a legal 75-card modern deck (15 cards four times, a 15-card sideboard).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};

use anyhow::Context as _;
use serde_json::{Value, json};

/// The 45,851 printings of 2019, one Scryfall card object per line, gzipped.
pub const CARDS_2019: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/mtg/default-cards-2019.jsonl.gz"
);

const COMMANDER: &str = "Atraxa, Praetors' Voice";
const BASICS: [(&str, u32); 4] = [("Plains", 9), ("Island", 9), ("Swamp", 9), ("Forest", 8)];

pub struct TournamentDecks {
    /// One printing of every card the decks use, as Scryfall card objects (JSON Lines), to
    /// import before checking.
    pub printings: String,
    /// Card entries (`section`, `quantity`, `name`) as the API takes them.
    pub commander: Vec<Value>,
    pub modern: Vec<Value>,
}

fn entry(section: &str, quantity: u32, name: &str) -> Value {
    json!({"section": section, "quantity": quantity, "name": name})
}

/// Picks the decks' cards from [`CARDS_2019`]: English single-faced cards, in name order.
///
/// # Errors
///
/// When the file is missing (it lives in `../shared/data/mtg`) or holds too few such cards.
pub fn tournament_decks() -> anyhow::Result<TournamentDecks> {
    let file = std::fs::File::open(CARDS_2019).with_context(|| format!("opening {CARDS_2019}"))?;
    let lines = BufReader::new(flate2::read::MultiGzDecoder::new(file)).lines();
    // Name -> (one printing, legal in commander within Atraxa's colours, legal in modern).
    let mut cards: BTreeMap<String, (String, bool, bool)> = BTreeMap::new();
    for line in lines {
        let line = line.context("reading the 2019 cards")?;
        if !line.contains(r#""lang":"en""#) || !line.contains(r#""layout":"normal""#) {
            continue;
        }
        let card: Value = serde_json::from_str(&line).context("a card object")?;
        let Some(name) = card["name"].as_str() else {
            continue;
        };
        let legal = |format: &str| card["legalities"][format] == "legal";
        let in_colours = card["color_identity"]
            .as_array()
            .is_some_and(|colours| colours.iter().all(|colour| colour != "R"));
        let basic = card["type_line"]
            .as_str()
            .is_some_and(|line| line.starts_with("Basic"));
        cards.entry(name.to_owned()).or_insert((
            line.clone(),
            !basic && legal("commander") && in_colours && name != COMMANDER,
            !basic && legal("modern"),
        ));
    }
    let pick = |wanted: fn(&(String, bool, bool)) -> bool, count: usize| -> Vec<String> {
        cards
            .iter()
            .filter(|(_, card)| wanted(card))
            .map(|(name, _)| name.clone())
            .take(count)
            .collect()
    };
    let singletons = pick(|card| card.1, 64);
    let modern = pick(|card| card.2, 20);
    anyhow::ensure!(
        singletons.len() == 64 && modern.len() == 20,
        "too few cards"
    );

    let mut commander = vec![entry("commander", 1, COMMANDER)];
    commander.extend(singletons.iter().map(|name| entry("mainboard", 1, name)));
    commander.extend(
        BASICS
            .iter()
            .map(|(name, quantity)| entry("mainboard", *quantity, name)),
    );
    let mut constructed: Vec<Value> = modern[..15]
        .iter()
        .map(|name| entry("mainboard", 4, name))
        .collect();
    constructed.extend(modern[15..].iter().map(|name| entry("sideboard", 3, name)));

    let mut used: Vec<&str> = vec![COMMANDER];
    used.extend(BASICS.iter().map(|(name, _)| *name));
    used.extend(singletons.iter().chain(&modern).map(String::as_str));
    let mut printings = String::new();
    for name in used {
        let (line, _, _) = cards.get(name).with_context(|| format!("no {name}"))?;
        printings.push_str(line);
        printings.push('\n');
    }
    Ok(TournamentDecks {
        printings,
        commander,
        modern: constructed,
    })
}
