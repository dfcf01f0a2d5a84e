//! Decks and their versions: a deck round-trips, each revision bumps the version and appends
//! history, a refused revision changes nothing, and a deck's own guide follows it.

use anyhow::Context as _;
use deckhand_domain::decks::ports::{
    InsertDeckError, ReviseDeckError, Reviser, Revision, RevisionRefused,
};
use deckhand_domain::decks::{
    CardSnapshot, ContentType, Deck, DeckCard, DeckGuide, DeckId, HistoryType, Visibility,
};
use deckhand_domain::events::EventType;
use deckhand_domain::identity::User;
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::{self, deck, now, revision_of, update_to, user};

use super::support::Outcome;

pub async fn decks_round_trip_and_start_at_version_one(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Mono Red");
    new.content.notes = "Go fast. «ünïcode»".into();
    new.content.visibility = Visibility::Unlisted;
    new.content.youtube_url = Some("https://youtu.be/x".into());
    new.content.archetype = Some("Aggro".into());
    new.provenance.source_external_id = Some("ext-1".into());
    new.provenance.source_imported_at = Some(datetime!(2026-11-20 10:00:00.000_001 UTC));
    let inserted = repos.decks.insert(&new).await?;
    let found = repos
        .decks
        .find(new.id)
        .await?
        .context("the deck just inserted")?;
    assert_eq!(found, inserted);
    assert_eq!(found.content, new.content);
    assert_eq!(found.provenance, new.provenance);
    assert_eq!(found.facts.author.username, alice.username);
    assert_eq!(
        (found.version, found.facts.pageviews, found.is_archived),
        (1, 0, false)
    );
    assert_eq!(
        (found.facts.created_at, found.facts.updated_at),
        (new.created_at, new.created_at)
    );
    let history = repos.decks.versions(new.id).await?;
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].version_number, history[0].history_type),
        (1, HistoryType::Create)
    );
    assert_eq!(history[0].content, new.content);
    assert!(repos.decks.find(DeckId(Uuid::now_v7())).await?.is_none());
    Ok(())
}

pub async fn a_duplicate_provenance_is_refused_per_owner(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let imported = |owner: &User, version: Option<&str>| {
        let mut new = deck(owner, "Imported");
        new.provenance.source_provider = "moxfield".into();
        new.provenance.source_external_id = Some("abc".into());
        new.provenance.source_external_version = version.map(str::to_owned);
        new
    };
    repos.decks.insert(&imported(&alice, None)).await?;
    // A missing external version reads as "".
    let again = repos.decks.insert(&imported(&alice, Some(""))).await;
    assert!(
        matches!(again, Err(InsertDeckError::DuplicateProvenance)),
        "{again:?}"
    );
    repos.decks.insert(&imported(&alice, Some("v2"))).await?;
    repos.decks.insert(&imported(&bob, None)).await?;
    // Without an external id there is nothing to be unique.
    repos.decks.insert(&deck(&alice, "Manual")).await?;
    repos.decks.insert(&deck(&alice, "Manual")).await?;
    Ok(())
}

pub async fn revisions_bump_the_version_and_append_history(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "First");
    repos.decks.insert(&new).await?;
    let later = new.created_at + time::Duration::seconds(5);
    let saved = repos
        .decks
        .revise(new.id, update_to("Second", later))
        .await?;
    assert_eq!((saved.version, saved.content.name.as_str()), (2, "Second"));
    assert_eq!(saved.facts.updated_at, later);
    assert_eq!(saved.facts.created_at, new.created_at);
    let restore = Box::new(move |deck: &Deck| {
        let mut content = deck.content.clone();
        content.name = "First".into();
        Ok(Revision {
            content,
            summary: deck.facts.summary.clone(),
            provenance: deck.provenance.clone(),
            is_archived: false,
            history_type: HistoryType::Rollback { restored_from: 1 },
            at: later,
            origin: fixtures::origin(),
        })
    });
    repos.decks.revise(new.id, restore).await?;
    let history = repos.decks.versions(new.id).await?;
    let summary: Vec<(i32, HistoryType, String)> = history
        .iter()
        .map(|version| {
            (
                version.version_number,
                version.history_type,
                version.content.name.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (1, HistoryType::Create, "First".to_owned()),
            (2, HistoryType::Update, "Second".to_owned()),
            (
                3,
                HistoryType::Rollback { restored_from: 1 },
                "First".to_owned()
            ),
        ]
    );
    let second = repos.decks.version(new.id, 2).await?.context("version 2")?;
    assert_eq!(second.content.name, "Second");
    assert!(repos.decks.version(new.id, 4).await?.is_none());
    Ok(())
}

/// A line of `quantity` copies of a card named `name`.
fn card_line(name: &str, quantity: u32) -> DeckCard {
    DeckCard {
        section: "mainboard".into(),
        quantity,
        foil: false,
        card: CardSnapshot {
            variant_id: Uuid::new_v4(),
            card_id: Uuid::new_v4(),
            name: name.into(),
            set: "tst".into(),
            collector_number: "1".into(),
            type_line: "Creature — Test".into(),
            image_url: None,
            colors: vec!["R".into()],
        },
    }
}

/// A save that sets the notes and, when given, the cards, as `history_type`.
fn save(notes: &str, cards: Option<Vec<DeckCard>>, history_type: HistoryType) -> Reviser {
    let notes = notes.to_owned();
    Box::new(move |deck: &Deck| {
        let mut content = deck.content.clone();
        content.notes.clone_from(&notes);
        if let Some(cards) = &cards {
            content.cards.clone_from(cards);
        }
        let at = deck.facts.updated_at + time::Duration::seconds(1);
        Ok(revision_of(deck, content, history_type, at))
    })
}

/// Saves that keep the card list, change it, keep it again and restore an older one: each
/// version reads back with the very cards it was saved with, listed or read alone.
pub async fn every_version_reads_back_the_cards_it_was_saved_with(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let first_cards = vec![card_line("Arclight Phoenix", 4), card_line("Opt", 2)];
    let second_cards = vec![card_line("Thing in the Ice", 3)];
    let mut new = deck(&alice, "History");
    new.content.cards = first_cards.clone();
    repos.decks.insert(&new).await?;
    let update = HistoryType::Update;
    let rollback = HistoryType::Rollback { restored_from: 1 };
    repos
        .decks
        .revise(new.id, save("notes only", None, update))
        .await?;
    repos
        .decks
        .revise(
            new.id,
            save("new cards", Some(second_cards.clone()), update),
        )
        .await?;
    repos
        .decks
        .revise(new.id, save("notes again", None, update))
        .await?;
    let restored = repos
        .decks
        .revise(new.id, save("", Some(first_cards.clone()), rollback))
        .await?;
    repos
        .decks
        .revise(new.id, save("last", None, update))
        .await?;
    let expected = [
        ("", &first_cards),
        ("notes only", &first_cards),
        ("new cards", &second_cards),
        ("notes again", &second_cards),
        ("", &first_cards),
        ("last", &first_cards),
    ];
    let history = repos.decks.versions(new.id).await?;
    let read: Vec<(&str, &Vec<DeckCard>)> = history
        .iter()
        .map(|version| (version.content.notes.as_str(), &version.content.cards))
        .collect();
    assert_eq!(read, expected);
    assert_eq!(history[4].content, restored.content);
    for version in &history {
        let alone = repos
            .decks
            .version(new.id, version.version_number)
            .await?
            .context("a listed version")?;
        assert_eq!(&alone, version);
    }
    let current = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!(current.content.cards, first_cards);
    Ok(())
}

pub async fn a_revision_clears_nullable_fields(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Full");
    new.content.youtube_url = Some("https://youtu.be/v".into());
    new.content.thumbnail = Some("thumb.png".into());
    new.content.archetype = Some("Aggro".into());
    new.provenance.source_external_id = Some("ext".into());
    new.provenance.source_imported_at = Some(now());
    repos.decks.insert(&new).await?;
    let clear: Reviser = Box::new(|deck: &Deck| {
        let mut content = deck.content.clone();
        content.youtube_url = None;
        content.thumbnail = None;
        content.archetype = None;
        let mut provenance = deck.provenance.clone();
        provenance.source_external_id = None;
        provenance.source_imported_at = None;
        Ok(Revision {
            content,
            summary: deck.facts.summary.clone(),
            provenance,
            is_archived: deck.is_archived,
            history_type: HistoryType::Update,
            at: deck.facts.updated_at,
            origin: fixtures::origin(),
        })
    });
    repos.decks.revise(new.id, clear).await?;
    let found = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!(
        (
            found.content.youtube_url,
            found.content.thumbnail,
            found.content.archetype
        ),
        (None, None, None)
    );
    assert_eq!(
        (
            found.provenance.source_external_id,
            found.provenance.source_imported_at
        ),
        (None, None)
    );
    Ok(())
}

pub async fn a_refused_revision_changes_nothing(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "Kept");
    repos.decks.insert(&new).await?;
    let refuse: Reviser = Box::new(|deck: &Deck| {
        Err(RevisionRefused::PreconditionFailed {
            current_version: deck.version,
        })
    });
    let outcome = repos.decks.revise(new.id, refuse).await;
    assert!(
        matches!(
            outcome,
            Err(ReviseDeckError::Refused(
                RevisionRefused::PreconditionFailed { current_version: 1 }
            ))
        ),
        "{outcome:?}"
    );
    let found = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!((found.version, found.content.name.as_str()), (1, "Kept"));
    assert_eq!(repos.decks.versions(new.id).await?.len(), 1);

    // A revision that would duplicate another deck's provenance is refused whole, too.
    let mut imported = deck(&alice, "Imported");
    imported.provenance.source_external_id = Some("x".into());
    repos.decks.insert(&imported).await?;
    let copy_provenance: Reviser = Box::new(move |deck: &Deck| {
        let mut provenance = deck.provenance.clone();
        provenance.source_external_id = Some("x".into());
        Ok(Revision {
            content: deck.content.clone(),
            summary: deck.facts.summary.clone(),
            provenance,
            is_archived: false,
            history_type: HistoryType::Update,
            at: deck.facts.updated_at,
            origin: fixtures::origin(),
        })
    });
    let outcome = repos.decks.revise(new.id, copy_provenance).await;
    assert!(
        matches!(outcome, Err(ReviseDeckError::DuplicateProvenance)),
        "{outcome:?}"
    );
    assert_eq!(repos.decks.versions(new.id).await?.len(), 1);
    Ok(())
}

pub async fn revising_a_missing_deck_is_not_found(repos: &Repositories) -> Outcome {
    let outcome = repos
        .decks
        .revise(DeckId(Uuid::now_v7()), update_to("x", now()))
        .await;
    assert!(
        matches!(outcome, Err(ReviseDeckError::NotFound)),
        "{outcome:?}"
    );
    Ok(())
}

pub async fn a_guide_is_created_replaced_and_deleted_with_has_guide(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "Guided");
    repos.decks.insert(&new).await?;
    assert!(repos.decks.guide(new.id).await?.is_none());
    let first = DeckGuide {
        id: Uuid::now_v7(),
        deck_id: new.id,
        content_type: ContentType::Markdown,
        content: "# Mulligan\nKeep lands. «ünïcode»".into(),
        is_premium: true,
        created_at: datetime!(2026-06-01 12:00:00.000_001 UTC),
        updated_at: datetime!(2026-06-01 12:00:00.000_001 UTC),
    };
    let (stored, created) = repos
        .decks
        .put_guide(
            &first,
            &fixtures::change(EventType::DeckStrategyGuideUpdated, first.updated_at),
        )
        .await?;
    assert!(created);
    assert_eq!(stored, first);
    assert_eq!(repos.decks.guide(new.id).await?, Some(first.clone()));
    assert!(
        repos
            .decks
            .find(new.id)
            .await?
            .context("the deck")?
            .facts
            .has_guide
    );

    let replacement = DeckGuide {
        id: Uuid::now_v7(),
        content_type: ContentType::Text,
        content: "Plain.".into(),
        is_premium: false,
        created_at: datetime!(2026-06-02 12:00 UTC),
        updated_at: datetime!(2026-06-02 12:00 UTC),
        ..first.clone()
    };
    let (stored, created) = repos
        .decks
        .put_guide(
            &replacement,
            &fixtures::change(EventType::DeckStrategyGuideUpdated, replacement.updated_at),
        )
        .await?;
    assert!(!created);
    assert_eq!(
        (stored.id, stored.created_at),
        (first.id, first.created_at),
        "a replaced guide keeps its identity"
    );
    assert_eq!(
        (stored.content.as_str(), stored.updated_at),
        ("Plain.", replacement.updated_at)
    );

    assert!(
        repos
            .decks
            .delete_guide(
                new.id,
                &fixtures::change(EventType::DeckStrategyGuideDeleted, fixtures::now())
            )
            .await?
    );
    assert!(
        !repos
            .decks
            .delete_guide(
                new.id,
                &fixtures::change(EventType::DeckStrategyGuideDeleted, fixtures::now())
            )
            .await?
    );
    assert!(repos.decks.guide(new.id).await?.is_none());
    assert!(
        !repos
            .decks
            .find(new.id)
            .await?
            .context("the deck")?
            .facts
            .has_guide
    );
    Ok(())
}
