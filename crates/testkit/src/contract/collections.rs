//! The collections' contract: signed deltas all or nothing, with one version and one event per
//! write; concurrent writes lose nothing; listings filter and page in card order; the copies of
//! a card are summed over printings and finishes; collection events are their owner's alone.

use std::collections::HashMap;

use deckhand_domain::collections::ports::ApplyError;
use deckhand_domain::collections::{
    CollectionCard, CollectionFilter, CollectionLine, CollectionQuery, CollectionTotals,
    CollectionWrite, WriteMode, merge_lines,
};
use deckhand_domain::decks::PageRequest;
use deckhand_domain::events::{
    Cursor, EventType, FeedQuery, FeedReader, SubjectAccess, TypeFilter,
};
use deckhand_domain::identity::{User, UserId};
use deckhand_domain::ports::Repositories;
use serde_json::json;
use uuid::Uuid;

use super::support::Outcome;
use crate::fixtures::{now, origin, user};

fn card(n: u128, name: &str, set: &str, number: &str) -> CollectionCard {
    CollectionCard {
        variant_id: Uuid::from_u128(0xc0_0000 + n),
        card_id: Uuid::from_u128(0xca_0000 + n / 10),
        name: name.into(),
        set: set.into(),
        collector_number: number.into(),
    }
}

fn line(index: usize, card: &CollectionCard, foil: bool, quantity: i64) -> CollectionLine {
    CollectionLine {
        index,
        card: card.clone(),
        foil,
        quantity,
        trade_quantity: 0,
        condition: None,
        language: None,
    }
}

fn write(owner: &User, mode: WriteMode, lines: Vec<CollectionLine>) -> CollectionWrite {
    CollectionWrite {
        owner: owner.id,
        game: "mtg".into(),
        mode,
        lines: merge_lines(lines),
        origin: origin(),
        at: now(),
    }
}

fn query(
    owner: &User,
    q: Option<&str>,
    set: Option<&str>,
    page: u32,
    limit: u32,
) -> CollectionQuery {
    CollectionQuery {
        owner: owner.id,
        game: "mtg".into(),
        filter: CollectionFilter::new(q, set),
        page: PageRequest { page, limit },
    }
}

/// (name, set, foil, quantity, trade quantity) of a page, in order.
async fn listed(
    repos: &Repositories,
    query: &CollectionQuery,
) -> anyhow::Result<Vec<(String, String, bool, u32, u32)>> {
    Ok(repos
        .collections
        .list(query)
        .await?
        .items
        .into_iter()
        .map(|entry| {
            (
                entry.card.name,
                entry.card.set,
                entry.foil,
                entry.quantity,
                entry.trade_quantity,
            )
        })
        .collect())
}

pub async fn collection_deltas_apply_all_or_nothing_with_a_version_and_event(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let (elves, wurm) = (
        card(10, "Llanowar Elves", "m19", "314"),
        card(20, "Siege Wurm", "m19", "202"),
    );
    assert_eq!(
        repos.collections.totals(alice.id, "mtg").await?,
        CollectionTotals::default(),
        "a collection never written is empty at version 0"
    );

    let mut first = line(0, &elves, false, 4);
    first.trade_quantity = 2;
    first.condition = Some("Near Mint".into());
    let totals = repos
        .collections
        .apply(&write(
            &alice,
            WriteMode::Add,
            vec![first, line(1, &elves, true, 1), line(2, &wurm, false, 2)],
        ))
        .await?;
    assert_eq!(
        totals,
        CollectionTotals {
            entries: 3,
            cards: 7,
            version: 1
        }
    );

    // One line would go below zero: nothing of the write happens, not even its good lines.
    let refused = repos
        .collections
        .apply(&write(
            &alice,
            WriteMode::Add,
            vec![line(0, &wurm, false, 5), line(1, &elves, true, -2)],
        ))
        .await;
    assert!(
        matches!(refused, Err(ApplyError::BelowZero { index: 1 })),
        "{refused:?}"
    );
    assert_eq!(repos.collections.totals(alice.id, "mtg").await?, totals);

    // Down to zero removes the entry; the trade quantity follows the quantity down.
    let totals = repos
        .collections
        .apply(&write(
            &alice,
            WriteMode::Add,
            vec![line(0, &elves, true, -1), line(1, &elves, false, -3)],
        ))
        .await?;
    assert_eq!(
        totals,
        CollectionTotals {
            entries: 2,
            cards: 3,
            version: 2
        }
    );
    assert_eq!(
        listed(repos, &query(&alice, None, None, 1, 10)).await?,
        [
            ("Llanowar Elves".to_owned(), "m19".to_owned(), false, 1, 1),
            ("Siege Wurm".to_owned(), "m19".to_owned(), false, 2, 0),
        ]
    );
    let all = repos.collections.all(alice.id, "mtg").await?;
    assert_eq!(
        all[0].condition.as_deref(),
        Some("Near Mint"),
        "kept when a later write gives none"
    );

    let owned = repos
        .collections
        .owned(
            alice.id,
            "mtg",
            &[elves.card_id, wurm.card_id, Uuid::from_u128(7)],
        )
        .await?;
    assert_eq!(
        owned,
        HashMap::from([(elves.card_id, 1), (wurm.card_id, 2)])
    );

    // Replace: the lines are the whole collection afterwards.
    let totals = repos
        .collections
        .apply(&write(
            &alice,
            WriteMode::Replace,
            vec![line(0, &wurm, true, 3)],
        ))
        .await?;
    assert_eq!(
        totals,
        CollectionTotals {
            entries: 1,
            cards: 3,
            version: 3
        }
    );
    assert_eq!(
        listed(repos, &query(&alice, None, None, 1, 10)).await?,
        [("Siege Wurm".to_owned(), "m19".to_owned(), true, 3, 0)]
    );
    assert_eq!(
        repos.collections.totals(alice.id, "other").await?,
        CollectionTotals::default(),
        "a collection is per game"
    );

    let events = repos.events.after(0, 100).await?;
    let written: Vec<_> = events
        .iter()
        .filter(|event| event.record.event_type == EventType::CollectionUpdated)
        .map(|event| (event.record.subject_id, event.record.data.clone()))
        .collect();
    assert_eq!(
        written,
        [
            (
                Some(alice.id.0),
                json!({"entries": 3, "cards": 7, "version": 1})
            ),
            (
                Some(alice.id.0),
                json!({"entries": 2, "cards": 3, "version": 2})
            ),
            (
                Some(alice.id.0),
                json!({"entries": 1, "cards": 3, "version": 3})
            ),
        ],
        "one event per write, none for the refused one"
    );
    Ok(())
}

pub async fn concurrent_collection_writes_lose_no_delta(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let elves = card(10, "Llanowar Elves", "m19", "314");
    let other = card(30, "Forest", "m19", "280");
    let writes = 24;
    let tasks: Vec<_> = (0..writes)
        .map(|n| {
            let repos = repos.clone();
            let lines = vec![line(0, &elves, false, 1), line(1, &other, n % 2 == 0, 2)];
            let write = write(&alice, WriteMode::Add, lines);
            tokio::spawn(async move { repos.collections.apply(&write).await })
        })
        .collect();
    let mut versions = Vec::new();
    for task in tasks {
        versions.push(
            task.await?
                .map_err(|error| anyhow::anyhow!("{error}"))?
                .version,
        );
    }
    versions.sort_unstable();
    assert_eq!(
        versions,
        (1..=writes).collect::<Vec<i64>>(),
        "versions without gaps"
    );
    let totals = repos.collections.totals(alice.id, "mtg").await?;
    assert_eq!(
        totals,
        CollectionTotals {
            entries: 3,
            cards: 3 * writes as u64,
            version: writes
        }
    );
    Ok(())
}

pub async fn collection_lists_filter_and_page_in_card_order(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let cards = [
        card(10, "Zombie Horde", "aaa", "1"),
        card(20, "llanowar elves", "m19", "314"),
        card(21, "Llanowar Elves", "dom", "168"),
        card(30, "Elvish Mystic", "m14", "169"),
        card(40, "50% Off_Sale", "m19", "2"),
    ];
    let lines = cards
        .iter()
        .enumerate()
        .map(|(n, card)| line(n, card, false, 1))
        .collect();
    repos
        .collections
        .apply(&write(&alice, WriteMode::Add, lines))
        .await?;
    repos
        .collections
        .apply(&write(
            &bob,
            WriteMode::Add,
            vec![line(0, &cards[0], true, 9)],
        ))
        .await?;

    let names = |entries: Vec<(String, String, bool, u32, u32)>| -> Vec<String> {
        entries
            .into_iter()
            .map(|(name, set, ..)| format!("{name}/{set}"))
            .collect()
    };
    assert_eq!(
        names(listed(repos, &query(&alice, None, None, 1, 10)).await?),
        [
            "50% Off_Sale/m19",
            "Elvish Mystic/m14",
            "Llanowar Elves/dom",
            "llanowar elves/m19",
            "Zombie Horde/aaa"
        ]
    );
    assert_eq!(
        names(listed(repos, &query(&alice, Some("ELV"), None, 1, 10)).await?),
        [
            "Elvish Mystic/m14",
            "Llanowar Elves/dom",
            "llanowar elves/m19"
        ]
    );
    assert_eq!(
        names(listed(repos, &query(&alice, Some("elves"), Some("M19"), 1, 10)).await?),
        ["llanowar elves/m19"]
    );
    assert_eq!(
        names(listed(repos, &query(&alice, Some("%"), None, 1, 10)).await?),
        ["50% Off_Sale/m19"],
        "wildcards are taken literally"
    );
    let second = repos
        .collections
        .list(&query(&alice, None, None, 2, 2))
        .await?;
    assert_eq!((second.total, second.total_exact), (5, true));
    assert_eq!(
        second
            .items
            .iter()
            .map(|entry| entry.card.set.as_str())
            .collect::<Vec<_>>(),
        ["dom", "m19"]
    );
    assert_eq!(repos.collections.all(alice.id, "mtg").await?.len(), 5);
    assert_eq!(repos.collections.all(bob.id, "mtg").await?.len(), 1);
    Ok(())
}

pub async fn collection_events_are_listed_to_their_owner_only(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let elves = card(10, "Llanowar Elves", "m19", "314");
    repos
        .collections
        .apply(&write(
            &alice,
            WriteMode::Add,
            vec![line(0, &elves, false, 1)],
        ))
        .await?;
    let feed = |viewer: Option<UserId>, collection_viewer: Option<UserId>| FeedQuery {
        game: "mtg".into(),
        after: Some(Cursor { sequence: 0 }),
        types: TypeFilter::all(),
        limit: 100,
        reader: FeedReader {
            viewer,
            deck_events: true,
            guide_events: true,
            collection_viewer,
        },
    };
    let listed = |query: FeedQuery| async move {
        let scan = repos.events.scan(&query).await?;
        let page = scan
            .page(&query)
            .ok_or_else(|| anyhow::anyhow!("a live cursor"))?;
        anyhow::Ok(page.events.len())
    };
    assert_eq!(
        listed(feed(Some(alice.id), Some(alice.id))).await?,
        1,
        "the owner"
    );
    assert_eq!(
        listed(feed(Some(bob.id), Some(bob.id))).await?,
        0,
        "another user"
    );
    assert_eq!(
        listed(feed(Some(alice.id), None)).await?,
        0,
        "a partner alone acting as the owner, or a caller without collection:read"
    );
    let judged = repos.events.judged(0, i64::MAX).await?;
    let event = judged
        .iter()
        .find(|judged| judged.event.record.event_type == EventType::CollectionUpdated)
        .ok_or_else(|| anyhow::anyhow!("the event is judged"))?;
    assert_eq!(event.subject, Some(SubjectAccess::collection(alice.id)));
    Ok(())
}
