//! Card search and card statistics (`decks::card_search`): the list's card filters combine with
//! the read rule, the other filters and paging alike in every store, follow a deck's saves, and
//! every store gathers a card's usage from the same decks.

use deckhand_domain::catalog::format_id;
use deckhand_domain::decks::card_search::{CardStatsQuery, STATS_MAX_AGE};
use deckhand_domain::decks::ports::NewDeck;
use deckhand_domain::decks::{
    CardSnapshot, DeckCard, DeckFilters, DeckListing, DeckQuery, DeckSort, HistoryType, Page,
    PageRequest, SortOrder, Visibility,
};
use deckhand_domain::identity::UserId;
use deckhand_domain::ports::Repositories;
use time::OffsetDateTime;
use uuid::Uuid;

use super::support::Outcome;
use crate::fixtures::{deck, now, revision_of, update_to, user};

/// Three cards, in the order of their ids (ties in "played with" are broken by id).
const A: Uuid = Uuid::from_u128(0xa);
const B: Uuid = Uuid::from_u128(0xb);
const C: Uuid = Uuid::from_u128(0xc);

fn line(section: &str, card: Uuid, quantity: u32) -> DeckCard {
    DeckCard {
        section: section.into(),
        quantity,
        foil: false,
        card: CardSnapshot {
            variant_id: Uuid::new_v4(),
            card_id: card,
            name: format!("Card {card}"),
            set: "tst".into(),
            collector_number: "1".into(),
            type_line: "Instant".into(),
            image_url: None,
            colors: Vec::new(),
        },
    }
}

/// A deck of `owner` (public, `mtg`, no format) named `name` holding `cards`.
fn holding(owner: &deckhand_domain::identity::User, name: &str, cards: Vec<DeckCard>) -> NewDeck {
    let mut new = deck(owner, name);
    new.content.cards = cards;
    new
}

fn query(viewer: Option<UserId>, filters: DeckFilters) -> DeckQuery {
    DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        viewer,
        filters,
        sort: DeckSort::CreatedAt,
        order: SortOrder::Asc,
        page: PageRequest { page: 1, limit: 20 },
    }
}

fn cards(all_of: &[Uuid], none_of: &[Uuid]) -> DeckFilters {
    DeckFilters {
        cards: all_of.to_vec(),
        exclude_cards: none_of.to_vec(),
        ..DeckFilters::default()
    }
}

fn names(page: &Page<DeckListing>) -> Vec<&str> {
    page.items.iter().map(|deck| deck.name.as_str()).collect()
}

pub async fn card_filters_hold_every_card_and_none_excluded_under_the_read_rule(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    let bob = user("bob");
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let burn = holding(
        &alice,
        "Burn",
        vec![line("mainboard", A, 4), line("sideboard", B, 2)],
    );
    let sligh = holding(
        &bob,
        "Sligh",
        vec![line("mainboard", A, 4), line("mainboard", C, 1)],
    );
    // The maybeboard is not counted: this deck does not hold A.
    let maybe = holding(&bob, "Maybe", vec![line("maybeboard", A, 1)]);
    let mut hidden = holding(
        &alice,
        "Hidden",
        vec![line("mainboard", A, 1), line("commander", B, 1)],
    );
    hidden.content.visibility = Visibility::Private;
    let archived = holding(
        &bob,
        "Archived",
        vec![line("mainboard", A, 1), line("mainboard", B, 1)],
    );
    let only_b = holding(&bob, "Only B", vec![line("mainboard", B, 3)]);
    let mut elsewhere = holding(&bob, "Elsewhere", vec![line("mainboard", A, 2)]);
    elsewhere.game = "lorcana".into();
    for new in [
        &burn, &sligh, &maybe, &hidden, &archived, &only_b, &elsewhere,
    ] {
        repos.decks.insert(new).await?;
    }
    repos
        .decks
        .revise(
            archived.id,
            Box::new(move |deck| {
                let mut revision =
                    revision_of(deck, deck.content.clone(), HistoryType::Update, now());
                revision.is_archived = true;
                Ok(revision)
            }),
        )
        .await?;

    let list = |viewer: Option<UserId>, filters: DeckFilters| {
        let query = query(viewer, filters);
        async move { repos.decks.list(&query).await }
    };
    let anonymous = list(None, cards(&[A], &[])).await?;
    assert_eq!(
        names(&anonymous),
        ["Burn", "Sligh"],
        "public decks holding A"
    );
    assert_eq!((anonymous.total, anonymous.total_exact), (2, true));
    assert_eq!(
        names(&list(Some(alice.id), cards(&[A], &[])).await?),
        ["Burn", "Sligh", "Hidden"],
        "the owner's private deck too, never an archived one"
    );
    assert_eq!(
        names(&list(Some(alice.id), cards(&[A, B], &[])).await?),
        ["Burn", "Hidden"],
        "every card asked for, in any counted section"
    );
    assert_eq!(names(&list(None, cards(&[A], &[B])).await?), ["Sligh"]);
    assert_eq!(
        names(&list(None, cards(&[], &[A])).await?),
        ["Maybe", "Only B"],
        "a card in an uncounted section is not held"
    );
    let mut lorcana = query(None, cards(&[A], &[]));
    lorcana.game = "lorcana".into();
    assert_eq!(names(&repos.decks.list(&lorcana).await?), ["Elsewhere"]);

    // With the other filters, sorts and pages.
    let mut named = cards(&[A], &[]);
    named.name_contains = Some("LIGH".into());
    assert_eq!(names(&list(None, named).await?), ["Sligh"]);
    let mut by_author = cards(&[A], &[]);
    by_author.author = Some(alice.id);
    assert_eq!(
        names(&list(Some(alice.id), by_author).await?),
        ["Burn", "Hidden"]
    );
    let mut second = query(None, cards(&[A], &[]));
    second.sort = DeckSort::Views;
    second.order = SortOrder::Desc;
    second.page = PageRequest { page: 2, limit: 1 };
    let page = repos.decks.list(&second).await?;
    assert_eq!(
        (page.items.len(), page.total, page.total_exact),
        (1, 2, true)
    );

    // A save that drops A takes the deck out at once; a save that keeps the cards keeps it in.
    repos
        .decks
        .revise(
            burn.id,
            Box::new(|deck| {
                let mut content = deck.content.clone();
                content.cards.retain(|line| line.card.card_id != A);
                Ok(revision_of(deck, content, HistoryType::Update, now()))
            }),
        )
        .await?;
    repos
        .decks
        .revise(sligh.id, update_to("Sligh renamed", now()))
        .await?;
    let after = list(None, cards(&[A], &[])).await?;
    assert_eq!(names(&after), ["Sligh renamed"]);
    assert_eq!(after.total, 1);
    assert_eq!(
        names(&list(None, cards(&[B], &[])).await?),
        ["Burn", "Only B"]
    );
    Ok(())
}

pub async fn card_usage_counts_public_decks_of_the_format_and_their_companions(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let modern = format_id("mtg", "modern");
    let pioneer = format_id("mtg", "pioneer");
    let in_format = |name: &str, format, cards| {
        let mut new = holding(&alice, name, cards);
        new.content.format_id = Some(format);
        new
    };
    let one = in_format(
        "One",
        modern,
        vec![
            line("mainboard", A, 4),
            line("sideboard", B, 2),
            line("mainboard", C, 1),
        ],
    );
    let two = in_format(
        "Two",
        modern,
        vec![
            line("mainboard", A, 2),
            line("sideboard", A, 1),
            line("mainboard", C, 3),
        ],
    );
    let three = in_format("Three", modern, vec![line("mainboard", B, 1)]);
    let mut private = in_format("Private", modern, vec![line("mainboard", A, 4)]);
    private.content.visibility = Visibility::Unlisted;
    let other = in_format(
        "Other",
        pioneer,
        vec![line("mainboard", A, 1), line("mainboard", B, 1)],
    );
    let maybe = holding(&alice, "Maybe", vec![line("maybeboard", A, 4)]);
    for new in [&one, &two, &three, &private, &other, &maybe] {
        repos.decks.insert(new).await?;
    }

    let before = OffsetDateTime::now_utc();
    let usage = |format: Option<Uuid>| {
        let query = CardStatsQuery {
            game: "mtg".into(),
            card: A,
            format,
        };
        async move { repos.decks.card_usage(&query).await }
    };
    let in_modern = usage(Some(modern)).await?;
    assert_eq!(
        (in_modern.decks, in_modern.all_decks, in_modern.copies),
        (2, 3, 7),
        "public modern decks holding A, all public modern decks, copies of A in them"
    );
    assert_eq!(in_modern.played_with, vec![(C, 2), (B, 1)]);
    assert!(
        (in_modern.as_of - before).abs() < STATS_MAX_AGE,
        "gathered just now: {}",
        in_modern.as_of
    );

    let everywhere = usage(None).await?;
    assert_eq!(
        (everywhere.decks, everywhere.all_decks, everywhere.copies),
        (3, 5, 8),
        "every public deck of the game counts without a format"
    );
    assert_eq!(
        everywhere.played_with,
        vec![(B, 2), (C, 2)],
        "ties by card id"
    );

    let unplayed = repos
        .decks
        .card_usage(&CardStatsQuery {
            game: "lorcana".into(),
            card: A,
            format: None,
        })
        .await?;
    assert_eq!(
        (unplayed.decks, unplayed.all_decks, unplayed.copies),
        (0, 0, 0)
    );
    assert!(unplayed.played_with.is_empty());
    Ok(())
}
