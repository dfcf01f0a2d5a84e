//! What lists of decks show: public and own decks, never archived ones, filtered, sorted and
//! paged stably; view counts and trending; list items and overviews as the deck has them.

use anyhow::Context as _;
use deckhand_domain::catalog::format_id;
use deckhand_domain::decks::ports::{Reviser, Revision, ViewCount};
use deckhand_domain::decks::{
    Deck, DeckId, DeckQuery, DeckReader, DeckSort, DeckSummary, HistoryType, PageRequest,
    SortOrder, Visibility, trending,
};
use deckhand_domain::identity::User;
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::{deck, now, revision_of, user};

use super::support::{Outcome, anyone, list_query, names};

fn archive(at: time::OffsetDateTime) -> Reviser {
    Box::new(move |deck: &Deck| {
        Ok(Revision {
            is_archived: true,
            ..revision_of(deck, deck.content.clone(), HistoryType::Update, at)
        })
    })
}

pub async fn lists_show_public_and_own_decks_never_archived_ones(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let mut decks = Vec::new();
    for (owner, name, visibility) in [
        (&alice, "a-public", Visibility::Public),
        (&alice, "a-unlisted", Visibility::Unlisted),
        (&alice, "a-private", Visibility::Private),
        (&bob, "b-public", Visibility::Public),
        (&bob, "b-private", Visibility::Private),
        (&bob, "b-archived", Visibility::Public),
    ] {
        let mut new = deck(owner, name);
        new.content.visibility = visibility;
        new.created_at += time::Duration::milliseconds(decks.len() as i64);
        repos.decks.insert(&new).await?;
        decks.push(new);
    }
    let mut other_game = deck(&alice, "a-lorcana");
    other_game.game = "lorcana".into();
    repos.decks.insert(&other_game).await?;
    repos.decks.revise(decks[5].id, archive(now())).await?;

    let anonymous = repos.decks.list(&list_query(None)).await?;
    assert_eq!(names(&anonymous), ["a-public", "b-public"]);
    assert_eq!((anonymous.total, anonymous.total_exact), (2, true));
    let as_alice = repos.decks.list(&list_query(Some(alice.id))).await?;
    assert_eq!(
        names(&as_alice),
        ["a-public", "a-unlisted", "a-private", "b-public"]
    );
    let as_bob = repos.decks.list(&list_query(Some(bob.id))).await?;
    assert_eq!(names(&as_bob), ["a-public", "b-public", "b-private"]);
    // Archived decks leave lists but stay readable by id.
    assert!(
        repos
            .decks
            .find(decks[5].id)
            .await?
            .is_some_and(|deck| deck.is_archived)
    );
    Ok(())
}

pub async fn lists_filter_sort_and_page_stably(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let created = datetime!(2026-06-01 12:00 UTC);
    let mut ids = Vec::new();
    for (index, (owner, name, legal, video)) in [
        (&alice, "Burn 50%", true, false),
        (&alice, "burn_it_all", false, true),
        (&bob, "BURNING Bridges", true, true),
        (&bob, "Control", true, false),
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = deck(owner, name);
        // Two decks share a creation instant: the id breaks the tie.
        new.created_at = created + time::Duration::hours(index.min(2) as i64);
        new.content.legal = legal;
        new.content.youtube_url = video.then(|| "https://youtu.be/v".to_owned());
        repos.decks.insert(&new).await?;
        ids.push(new.id);
    }
    let with = |change: &dyn Fn(&mut DeckQuery)| {
        let mut query = list_query(None);
        change(&mut query);
        query
    };

    let burn = repos
        .decks
        .list(&with(&|q| q.filters.name_contains = Some("bUrN".into())))
        .await?;
    assert_eq!(names(&burn), ["Burn 50%", "burn_it_all", "BURNING Bridges"]);
    // LIKE wildcards in the filter are literal characters.
    let percent = repos
        .decks
        .list(&with(&|q| q.filters.name_contains = Some("50%".into())))
        .await?;
    assert_eq!(names(&percent), ["Burn 50%"]);
    let underscore = repos
        .decks
        .list(&with(&|q| q.filters.name_contains = Some("n_i".into())))
        .await?;
    assert_eq!(names(&underscore), ["burn_it_all"]);

    let bobs = repos
        .decks
        .list(&with(&|q| q.filters.author = Some(bob.id)))
        .await?;
    assert_eq!(names(&bobs), ["BURNING Bridges", "Control"]);
    let legal_videos = repos
        .decks
        .list(&with(&|q| {
            q.filters.is_legal = Some(true);
            q.filters.has_video = Some(true);
        }))
        .await?;
    assert_eq!(names(&legal_videos), ["BURNING Bridges"]);
    let window = repos
        .decks
        .list(&with(&|q| {
            q.filters.created_after = Some(created + time::Duration::hours(1));
            q.filters.created_before = Some(created + time::Duration::hours(2));
        }))
        .await?;
    assert_eq!(window.total, 3, "both bounds are inclusive");

    let descending = repos
        .decks
        .list(&with(&|q| q.order = SortOrder::Desc))
        .await?;
    let mut tied = [ids[2], ids[3]];
    tied.sort();
    tied.reverse();
    let expected: Vec<DeckId> = [tied[0], tied[1], ids[1], ids[0]].into();
    assert_eq!(
        descending
            .items
            .iter()
            .map(|deck| deck.facts.id)
            .collect::<Vec<_>>(),
        expected
    );

    let second_page = repos
        .decks
        .list(&with(&|q| {
            q.order = SortOrder::Desc;
            q.page = PageRequest { page: 2, limit: 3 };
        }))
        .await?;
    assert_eq!(
        second_page
            .items
            .iter()
            .map(|deck| deck.facts.id)
            .collect::<Vec<_>>(),
        [ids[0]]
    );
    assert_eq!((second_page.total, second_page.total_exact), (4, true));
    let past_the_end = repos
        .decks
        .list(&with(&|q| q.page = PageRequest { page: 3, limit: 3 }))
        .await?;
    assert!(past_the_end.items.is_empty());
    assert_eq!(past_the_end.total, 4);
    Ok(())
}

pub async fn views_count_once_per_visitor_and_window(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let new = deck(&alice, "Viewed");
    repos.decks.insert(&new).await?;
    let hour = time::Duration::hours(1);
    let at = datetime!(2026-06-01 12:00 UTC);
    let (first, second) = ([1u8; 32], [2u8; 32]);
    let count = |visitor: [u8; 32], when: time::OffsetDateTime| {
        let decks = repos.decks.clone();
        async move {
            decks
                .count_view(
                    new.id,
                    &anyone(),
                    &visitor,
                    when,
                    hour,
                    trending::view_weight(when),
                )
                .await?
                .context("a visible deck")
        }
    };
    assert_eq!(
        count(first, at).await?,
        ViewCount {
            pageviews: 1,
            incremented: true
        }
    );
    let soon = at + time::Duration::minutes(59);
    assert_eq!(
        count(first, soon).await?,
        ViewCount {
            pageviews: 1,
            incremented: false
        }
    );
    assert_eq!(
        count(second, soon).await?,
        ViewCount {
            pageviews: 2,
            incremented: true
        }
    );
    // The window runs from the last *counted* view.
    assert_eq!(
        count(first, at + hour).await?,
        ViewCount {
            pageviews: 3,
            incremented: true
        }
    );
    assert_eq!(
        repos
            .decks
            .find(new.id)
            .await?
            .context("the deck")?
            .facts
            .pageviews,
        3
    );
    Ok(())
}

pub async fn trending_ranks_recent_views_first(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let (old, fresh, unseen) = (
        deck(&alice, "old"),
        deck(&alice, "fresh"),
        deck(&alice, "unseen"),
    );
    for new in [&old, &fresh, &unseen] {
        repos.decks.insert(new).await?;
    }
    let hour = time::Duration::hours(1);
    let then = datetime!(2026-06-01 12:00 UTC);
    let now = then + time::Duration::days(3);
    for visitor in 0..5u8 {
        repos
            .decks
            .count_view(
                old.id,
                &anyone(),
                &[visitor; 32],
                then,
                hour,
                trending::view_weight(then),
            )
            .await?;
    }
    repos
        .decks
        .count_view(
            fresh.id,
            &anyone(),
            &[9; 32],
            now,
            hour,
            trending::view_weight(now),
        )
        .await?;
    let mut query = list_query(None);
    query.sort = DeckSort::Trending;
    query.order = SortOrder::Desc;
    // Five views three days ago are worth 5/8; one view now is worth 1.
    assert_eq!(
        names(&repos.decks.list(&query).await?),
        ["fresh", "old", "unseen"]
    );
    query.sort = DeckSort::Views;
    assert_eq!(
        names(&repos.decks.list(&query).await?),
        ["old", "fresh", "unseen"]
    );
    // Pages of a counter sort are slices of that order (PostgreSQL picks a page's ids in a
    // subquery and sorts its rows again).
    query.page = PageRequest { page: 2, limit: 1 };
    let second = repos.decks.list(&query).await?;
    assert_eq!(
        (names(&second), second.total),
        (vec!["fresh".to_owned()], 3)
    );
    Ok(())
}

pub async fn views_count_only_for_readers_who_may_see_the_deck(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let mut hidden = deck(&alice, "Hidden");
    hidden.content.visibility = Visibility::Private;
    repos.decks.insert(&hidden).await?;
    let hour = time::Duration::hours(1);
    let at = datetime!(2026-06-01 12:00 UTC);
    let reader = |game: &str, viewer: Option<&User>| DeckReader {
        game: game.into(),
        viewer: viewer.map(|user| user.id),
    };
    for refused in [
        reader("mtg", None),
        reader("mtg", Some(&bob)),
        reader("lorcana", Some(&alice)),
    ] {
        let count = repos
            .decks
            .count_view(hidden.id, &refused, &[1; 32], at, hour, 0.0)
            .await?;
        assert_eq!(count, None, "{refused:?}");
    }
    let missing = repos
        .decks
        .count_view(DeckId(Uuid::now_v7()), &anyone(), &[1; 32], at, hour, 0.0)
        .await?;
    assert_eq!(missing, None);
    // Refused views counted nothing, not even the dedupe record.
    let owner = repos
        .decks
        .count_view(
            hidden.id,
            &reader("mtg", Some(&alice)),
            &[1; 32],
            at,
            hour,
            0.0,
        )
        .await?;
    assert_eq!(
        owner,
        Some(ViewCount {
            pageviews: 1,
            incremented: true
        })
    );
    Ok(())
}

/// A list item is the deck as a list shows it: every field the same as on the deck itself, its
/// summary too when the page shows summaries; without them, every other field the same.
pub async fn list_items_carry_what_lists_show(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Izzet Phoenix");
    new.content.youtube_url = Some("https://www.youtube.com/watch?v=abc".into());
    new.content.archetype = Some("Tempo".into());
    new.content.format_id = Some(format_id("mtg", "modern"));
    new.summary.colors = vec!["U".into(), "R".into()];
    new.summary.section_counts = [("mainboard".to_owned(), 60)].into();
    new.provenance.source_provider = "moxfield".into();
    repos.decks.insert(&new).await?;
    let with_summary = DeckQuery {
        with_summary: true,
        ..list_query(None)
    };
    let page = repos.decks.list(&with_summary).await?;
    let stored = repos.decks.find(new.id).await?.context("the deck")?;
    assert_eq!(page.items, [stored.listing()]);
    assert_eq!(page.items[0].facts.summary.colors, ["U", "R"]);
    assert!(page.items[0].has_video);
    let mut without = repos.decks.list(&list_query(None)).await?.items;
    let summary = std::mem::take(&mut without[0].facts.summary);
    assert!(summary == stored.facts.summary || summary == DeckSummary::default());
    let mut listing = stored.listing();
    listing.facts.summary = DeckSummary::default();
    assert_eq!(without, [listing]);
    Ok(())
}

/// An overview reads what a detail shows of a deck, whatever its visibility or archive state,
/// and exactly what the full deck has.
pub async fn a_deck_overview_is_the_deck_without_its_cards(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut new = deck(&alice, "Izzet Phoenix");
    new.content.notes = "Keep two lands. «ünïcode»".into();
    new.content.visibility = Visibility::Private;
    new.content.archetype = Some("Tempo".into());
    new.summary.colors = vec!["U".into(), "R".into()];
    new.provenance.source_provider = "moxfield".into();
    new.provenance.source_external_id = Some("ext-7".into());
    new.provenance.source_external_url = Some("https://moxfield.com/decks/ext-7".into());
    repos.decks.insert(&new).await?;
    repos.decks.revise(new.id, archive(now())).await?;
    let stored = repos.decks.find(new.id).await?.context("the deck")?;
    let overview = repos
        .decks
        .find_overview(new.id)
        .await?
        .context("the deck's overview")?;
    assert_eq!(overview, stored.overview());
    assert_eq!(overview.version, 2);
    assert_eq!(overview.notes, new.content.notes);
    assert!(
        repos
            .decks
            .find_overview(DeckId(Uuid::now_v7()))
            .await?
            .is_none()
    );
    Ok(())
}

/// A store's own writes show in its next list totals, even where it remembers counts.
pub async fn list_totals_follow_the_stores_own_writes(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut query = list_query(None);
    query.page = PageRequest { page: 1, limit: 2 };
    for n in 0..3 {
        repos
            .decks
            .insert(&deck(&alice, &format!("deck {n}")))
            .await?;
    }
    let before = repos.decks.list(&query).await?;
    assert_eq!((before.total, before.total_exact), (3, true));
    let extra = deck(&alice, "deck 3");
    repos.decks.insert(&extra).await?;
    assert_eq!(repos.decks.list(&query).await?.total, 4);
    repos.decks.revise(extra.id, archive(now())).await?;
    assert_eq!(repos.decks.list(&query).await?.total, 3);
    Ok(())
}
