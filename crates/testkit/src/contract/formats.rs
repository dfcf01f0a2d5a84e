//! Format checks: each format's deck rules, the card facts a check reads, and the history of
//! legality changes, shipped, imported or recorded by an operator.

use std::collections::BTreeMap;

use anyhow::Context as _;
use deckhand_domain::catalog::CatalogEntry;
use deckhand_domain::formats::{
    CardFacts, CardTextRules, CopyAllowance, Legality, LegalityChange, PartnerAbility, seeds,
};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::printing;

use super::support::Outcome;

pub async fn formats_carry_their_deck_rules(repos: &Repositories) -> Outcome {
    let formats = repos.catalog.formats("mtg").await?;
    for format in formats.iter() {
        assert_eq!(
            format.rules,
            seeds::mtg_rules(&format.slug),
            "{}",
            format.slug
        );
        assert!(format.rules.is_some(), "{}", format.slug);
    }
    let commander = formats
        .iter()
        .find(|format| format.slug == "commander")
        .and_then(|format| format.rules.clone())
        .context("commander rules")?;
    assert!(commander.singleton);
    assert_eq!(
        commander.commander.map(|c| (c.count_max, c.deck_size)),
        Some((2, 100))
    );
    // A game whose formats have no rule rows: a check of them is refused.
    let lorcana = repos.catalog.formats("lorcana").await?;
    assert!(!lorcana.is_empty());
    assert!(lorcana.iter().all(|format| format.rules.is_none()));
    Ok(())
}

/// Facts of the cards with these ids, by name.
async fn facts_by_name(
    repos: &Repositories,
    ids: &[Uuid],
) -> anyhow::Result<std::collections::BTreeMap<String, std::sync::Arc<CardFacts>>> {
    Ok(repos
        .catalog
        .card_facts("mtg", ids)
        .await?
        .into_iter()
        .map(|facts| (facts.name.clone(), facts))
        .collect())
}

pub async fn card_facts_round_trip_with_seeded_and_imported_clauses(
    repos: &Repositories,
) -> Outcome {
    let at = datetime!(2026-01-01 00:00 UTC);
    let mut rats = printing(Uuid::new_v4(), "Relentless Rats", "m11", "111");
    rats.printing.type_line = "Creature — Rat".into();
    rats.color_identity = vec!["B".into()];
    let mut daretti = printing(Uuid::new_v4(), "Daretti, Scrap Savant", "c14", "33");
    daretti.printing.type_line = "Legendary Planeswalker — Daretti".into();
    daretti.color_identity = vec!["R".into()];
    let mut hounds = printing(Uuid::new_v4(), "Test Hounds", "tst", "1");
    hounds.text_rules = Some(CardTextRules {
        copies: CopyAllowance::UpTo(3),
        can_be_commander: false,
        partner: PartnerAbility::None,
        ..CardTextRules::default()
    });
    hounds.color_identity = vec!["W".into(), "G".into()];
    let plain = printing(Uuid::new_v4(), "Plain Card", "tst", "2");
    let ids: Vec<Uuid> = [&rats, &daretti, &hounds, &plain]
        .iter()
        .map(|entry| entry.printing.card_id)
        .collect();
    repos
        .catalog
        .upsert(
            "mtg",
            &[rats.clone(), daretti.clone(), hounds.clone(), plain.clone()],
            at,
        )
        .await?;
    let mut asked = ids.clone();
    asked.push(Uuid::new_v4());
    let facts = facts_by_name(repos, &asked).await?;
    assert_eq!(facts.len(), 4, "unknown ids are left out");
    let rats_facts = &facts["Relentless Rats"];
    assert_eq!(rats_facts.card_id, rats.printing.card_id);
    assert_eq!(rats_facts.type_line, "Creature — Rat");
    assert_eq!(rats_facts.color_identity, ["B"]);
    // Seeded by name, before the card was imported.
    assert_eq!(rats_facts.text.copies, CopyAllowance::Any);
    assert!(facts["Daretti, Scrap Savant"].text.can_be_commander);
    assert_eq!(facts["Test Hounds"].text.copies, CopyAllowance::UpTo(3));
    assert_eq!(facts["Test Hounds"].color_identity, ["W", "G"]);
    assert!(facts["Plain Card"].text.is_default());
    assert_eq!(
        facts["Plain Card"]
            .legalities
            .get("standard")
            .map(Vec::as_slice),
        Some(&[LegalityChange::recorded(at, Legality::Legal)][..])
    );
    // Only the game's formats are recorded.
    let mut odd = plain.clone();
    std::sync::Arc::make_mut(&mut odd.legalities).insert("oldschool".into(), "legal".into());
    repos.catalog.upsert("mtg", &[odd], at).await?;
    let facts = facts_by_name(repos, &ids).await?;
    assert!(!facts["Plain Card"].legalities.contains_key("oldschool"));

    // A file with rules text replaces a seeded clause, also with "nothing special".
    rats.text_rules = Some(CardTextRules::default());
    hounds.text_rules = Some(CardTextRules {
        copies: CopyAllowance::Any,
        can_be_commander: true,
        partner: PartnerAbility::With("test friend".into()),
        ..CardTextRules::default()
    });
    repos.catalog.upsert("mtg", &[rats, hounds], at).await?;
    let facts = facts_by_name(repos, &ids).await?;
    assert!(facts["Relentless Rats"].text.is_default());
    assert_eq!(facts["Test Hounds"].text.copies, CopyAllowance::Any);
    assert!(facts["Test Hounds"].text.can_be_commander);
    assert_eq!(
        facts["Test Hounds"].text.partner,
        PartnerAbility::With("test friend".into())
    );
    // Partners seeded for files without rules text, by name.
    let thrasios = printing(Uuid::new_v4(), "Thrasios, Triton Hero", "c16", "46");
    let pir = printing(Uuid::new_v4(), "Pir, Imaginative Rascal", "bbd", "73");
    let pair = [thrasios.printing.card_id, pir.printing.card_id];
    repos.catalog.upsert("mtg", &[thrasios, pir], at).await?;
    let facts = facts_by_name(repos, &pair).await?;
    assert_eq!(
        facts["Thrasios, Triton Hero"].text.partner,
        PartnerAbility::Any
    );
    assert_eq!(
        facts["Pir, Imaginative Rascal"].text.partner,
        PartnerAbility::With("toothy, imaginary friend".into())
    );
    assert!(repos.catalog.card_facts("lorcana", &ids).await?.is_empty());
    Ok(())
}

pub async fn imports_record_each_legality_change_once(repos: &Repositories) -> Outcome {
    let (first, second, third) = (
        datetime!(2026-01-01 00:00 UTC),
        datetime!(2026-02-01 00:00 UTC),
        datetime!(2026-03-01 00:00 UTC),
    );
    let mut pod = printing(Uuid::new_v4(), "Birthing Pod", "nph", "104");
    std::sync::Arc::make_mut(&mut pod.legalities).insert("modern".into(), "legal".into());
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), first)
        .await?;
    // The same legalities again: nothing new.
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), second)
        .await?;
    std::sync::Arc::make_mut(&mut pod.legalities).insert("modern".into(), "banned".into());
    // A status no check knows is left out of the history.
    std::sync::Arc::make_mut(&mut pod.legalities).insert("pioneer".into(), "suspended".into());
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), third)
        .await?;
    repos
        .catalog
        .upsert("mtg", std::slice::from_ref(&pod), third)
        .await?;
    let facts = facts_by_name(repos, &[pod.printing.card_id]).await?;
    let facts = &facts["Birthing Pod"];
    assert_eq!(
        facts.legalities["modern"],
        [
            LegalityChange::recorded(first, Legality::Legal),
            LegalityChange::recorded(third, Legality::Banned),
        ]
    );
    assert_eq!(facts.legalities["standard"].len(), 1);
    assert!(!facts.legalities.contains_key("pioneer"));
    assert_eq!(facts.legality("modern", second), Some(Legality::Legal));
    assert_eq!(facts.legality("modern", third), Some(Legality::Banned));
    assert_eq!(
        facts.legality("modern", datetime!(2000-01-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    Ok(())
}

pub async fn operators_record_legality_changes_from_a_date(repos: &Repositories) -> Outcome {
    let imported = datetime!(2026-01-01 00:00 UTC);
    let ban = datetime!(2026-06-01 00:00 UTC);
    let goyf = printing(Uuid::new_v4(), "Tarmogoyf", "fut", "153");
    let id = goyf.printing.card_id;
    repos.catalog.upsert("mtg", &[goyf], imported).await?;
    repos
        .catalog
        .record_legality("mtg", id, "standard", Legality::Restricted, ban)
        .await?;
    // The same card, format and time again: replaced, not added.
    repos
        .catalog
        .record_legality("mtg", id, "standard", Legality::Banned, ban)
        .await?;
    let facts = facts_by_name(repos, &[id]).await?;
    let facts = &facts["Tarmogoyf"];
    assert_eq!(facts.legalities["standard"].len(), 2);
    assert_eq!(facts.legality("standard", imported), Some(Legality::Legal));
    assert_eq!(facts.legality("standard", ban), Some(Legality::Banned));
    // Unknown cards and formats are refused.
    assert!(
        repos
            .catalog
            .record_legality("mtg", Uuid::new_v4(), "standard", Legality::Banned, ban)
            .await
            .is_err()
    );
    assert!(
        repos
            .catalog
            .record_legality("mtg", id, "oldschool", Legality::Banned, ban)
            .await
            .is_err()
    );
    Ok(())
}

/// Every shipped change (`data/mtg/banned-and-restricted.tsv`, loaded by a migration into
/// PostgreSQL and read by the memory store) is in the history of the card it names, once the
/// card is imported, with the status it replaced.
pub async fn shipped_history_joins_every_card_it_names(repos: &Repositories) -> Outcome {
    use deckhand_domain::catalog::history::announcements_by_name;
    let shipped = announcements_by_name("mtg");
    let entries: Vec<CatalogEntry> = shipped
        .values()
        .map(|changes| {
            let mut entry = printing(Uuid::new_v4(), &changes[0].card, "tst", "1");
            entry.legalities = std::sync::Arc::new(BTreeMap::new());
            entry
        })
        .collect();
    let ids: Vec<Uuid> = entries.iter().map(|entry| entry.printing.card_id).collect();
    repos
        .catalog
        .upsert("mtg", &entries, datetime!(2021-01-01 00:00 UTC))
        .await?;
    let facts = facts_by_name(repos, &ids).await?;
    assert_eq!(facts.len(), shipped.len());
    let mut seen = 0;
    for changes in shipped.values() {
        let card = &facts[&changes[0].card];
        for change in changes {
            assert!(
                card.legalities[&change.format].contains(&change.record()),
                "{change:?} in {card:?}"
            );
            seen += 1;
        }
        let records: usize = card.legalities.values().map(Vec::len).sum();
        assert_eq!(records, changes.len(), "only the shipped records: {card:?}");
    }
    assert_eq!(seen, 90);
    Ok(())
}

/// An import stamps what it brings with the file's day and records only what differs from the
/// status in force that day (shipped changes included); a printing released after that day
/// says nothing of its card's legality; a second import of the same file records nothing.
pub async fn imports_record_what_differs_on_the_files_day(repos: &Repositories) -> Outcome {
    let day = datetime!(2019-04-01 00:00 UTC);
    let with = |name: &str, statuses: &[(&str, &str)]| {
        let mut entry = printing(Uuid::new_v4(), name, "tst", "1");
        entry.released_at = Some(time::macros::date!(2012 - 01 - 01));
        entry.legalities = std::sync::Arc::new(
            statuses
                .iter()
                .map(|(format, status)| ((*format).to_owned(), (*status).to_owned()))
                .collect(),
        );
        entry
    };
    let kci = with("Krark-Clan Ironworks", &[("modern", "banned")]);
    let looting = with(
        "Faithless Looting",
        &[("modern", "legal"), ("pauper", "legal")],
    );
    let mut hogaak = with("Hogaak, Arisen Necropolis", &[("modern", "not_legal")]);
    hogaak.released_at = Some(time::macros::date!(2019 - 06 - 14));
    let entries = [kci.clone(), looting.clone(), hogaak.clone()];
    let ids: Vec<Uuid> = entries.iter().map(|entry| entry.printing.card_id).collect();
    repos.catalog.upsert("mtg", &entries, day).await?;
    let first = facts_by_name(repos, &ids).await?;
    repos.catalog.upsert("mtg", &entries, day).await?;
    let again = facts_by_name(repos, &ids).await?;
    assert_eq!(again, first, "a second import records nothing");

    let kci = &first["Krark-Clan Ironworks"];
    // Banned on the file's day already, as the shipped change says: nothing to record.
    assert_eq!(kci.legalities["modern"].len(), 1);
    assert_eq!(
        kci.legality("modern", datetime!(2019-01-24 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(
        kci.legality("modern", datetime!(2019-01-26 00:00 UTC)),
        Some(Legality::Banned)
    );
    let looting = &first["Faithless Looting"];
    assert_eq!(
        looting.legality("modern", datetime!(2019-08-29 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(
        looting.legality("modern", datetime!(2019-08-31 00:00 UTC)),
        Some(Legality::Banned)
    );
    assert_eq!(
        looting.legality("pauper", datetime!(2020-06-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    // Not yet released on the file's day: only the shipped change speaks.
    let hogaak = &first["Hogaak, Arisen Necropolis"];
    assert_eq!(hogaak.legalities["modern"].len(), 1);
    assert_eq!(
        hogaak.legality("modern", datetime!(2019-07-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    assert_eq!(hogaak.legality("standard", day), None);

    // An operator's later record keeps its place when the old file comes again.
    repos
        .catalog
        .record_legality(
            "mtg",
            looting.card_id,
            "pauper",
            Legality::Banned,
            datetime!(2024-01-01 00:00 UTC),
        )
        .await?;
    repos.catalog.upsert("mtg", &entries, day).await?;
    let after = facts_by_name(repos, &ids).await?;
    let looting = &after["Faithless Looting"];
    assert_eq!(looting.legalities["pauper"].len(), 2);
    assert_eq!(
        looting.legality("pauper", datetime!(2024-06-01 00:00 UTC)),
        Some(Legality::Banned)
    );
    assert_eq!(
        looting.legality("pauper", datetime!(2023-06-01 00:00 UTC)),
        Some(Legality::Legal)
    );
    Ok(())
}
