//! Sideboard guides and their matchups: round trips with their decks, the decks' guide flag,
//! lists as each reader may see them, and revisions on the right guide only.

use anyhow::Context as _;
use deckhand_domain::decks::{DeckId, Page, PageRequest, SortOrder, Visibility};
use deckhand_domain::events::EventType;
use deckhand_domain::ports::Repositories;
use deckhand_domain::sideboards::ports::{ReviseGuideError, ReviseMatchupError};
use deckhand_domain::sideboards::{
    Difficulty, GuideId, GuideQuery, GuideSort, MatchupContent, SideboardGuide,
};
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::{self, deck, guide_archived, matchup, now, user};

use super::support::{Outcome, guide_query, list_query, names};

fn guide_names(page: &Page<SideboardGuide>) -> Vec<String> {
    page.items
        .iter()
        .map(|guide| guide.content.name.clone())
        .collect()
}

async fn flags(repos: &Repositories, decks: &[DeckId]) -> anyhow::Result<Vec<bool>> {
    let mut flags = Vec::new();
    for deck in decks {
        flags.push(
            repos
                .decks
                .find(*deck)
                .await?
                .context("an attached deck")?
                .facts
                .has_sideboard_guide,
        );
    }
    Ok(flags)
}

pub async fn sideboard_guides_round_trip_with_their_decks_and_matchups(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let mut primary = deck(&alice, "Izzet Phoenix");
    primary.summary.colors = vec!["U".into(), "R".into()];
    repos.decks.insert(&primary).await?;
    let mut new = fixtures::guide(&alice, primary.id, "Phoenix plan «ü»");
    new.content.description = "d".repeat(1000);
    new.content.notes = "Board in the hate.".into();
    new.content.visibility = Visibility::Unlisted;
    new.content.tags = vec!["modern".into(), "tempo".into()];
    new.content.format = Some("Modern".into());
    new.content.youtube_url = Some("https://youtu.be/p".into());
    new.content.premium = true;
    new.created_at = datetime!(2026-06-01 12:00:00.000_001 UTC);
    // Stored out of order: the detail sorts by sort_order, then creation.
    new.matchups = vec![matchup("Burn", Some("Aggro"), 2), matchup("Tron", None, 1)];
    let inserted = repos.sideboard_guides.insert(&new).await?;
    assert_eq!(inserted.guide.content, new.content);
    assert_eq!(inserted.guide.author.username, alice.username);
    assert_eq!(
        (inserted.guide.created_at, inserted.guide.updated_at),
        (new.created_at, new.created_at)
    );
    assert_eq!(
        (inserted.guide.matchup_count, inserted.guide.is_archived),
        (2, false)
    );
    assert_eq!(
        inserted
            .guide
            .primary_summary
            .as_ref()
            .map(|s| s.colors.clone()),
        Some(vec!["U".to_owned(), "R".to_owned()])
    );
    let opponents: Vec<&str> = inserted
        .matchups
        .iter()
        .map(|m| m.content.opponent_deck_name.as_str())
        .collect();
    assert_eq!(opponents, ["Tron", "Burn"]);
    assert_eq!(inserted.matchups[1].content, new.matchups[0].content);
    assert_eq!(inserted.decks.len(), 1);
    assert!(inserted.decks[0].is_primary);
    assert_eq!(inserted.decks[0].name, "Izzet Phoenix");

    let detail = repos
        .sideboard_guides
        .detail(new.id)
        .await?
        .context("the guide just inserted")?;
    assert_eq!(detail, inserted);
    let found = repos
        .sideboard_guides
        .find(new.id)
        .await?
        .context("the guide")?;
    assert_eq!(found.content, new.content);
    assert_eq!(found.primary_summary, None, "find loads no summary");
    assert_eq!(flags(repos, &[primary.id]).await?, [true]);
    assert!(
        repos
            .sideboard_guides
            .find(GuideId(Uuid::now_v7()))
            .await?
            .is_none()
    );
    Ok(())
}

pub async fn has_sideboard_guide_follows_attach_detach_archive_and_unarchive(
    repos: &Repositories,
) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (a, b) = (deck(&alice, "A"), deck(&bob, "B"));
    repos.decks.insert(&a).await?;
    repos.decks.insert(&b).await?;
    let first = fixtures::guide(&alice, a.id, "first");
    let second = fixtures::guide(&bob, b.id, "second");
    repos.sideboard_guides.insert(&first).await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [true, false]);
    repos.sideboard_guides.insert(&second).await?;
    let at = now();

    // b is attached to both guides.
    assert!(
        repos
            .sideboard_guides
            .attach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckAttached, at)
            )
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .attach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckAttached, at)
            )
            .await?,
        "attaching twice changes nothing"
    );
    let detail = repos
        .sideboard_guides
        .detail(first.id)
        .await?
        .context("first")?;
    let ids: Vec<DeckId> = detail.decks.iter().map(|deck| deck.id).collect();
    assert_eq!(ids, [a.id, b.id], "primary first, then in attach order");
    assert_eq!(detail.guide.updated_at, at, "an attach edits the guide");

    repos
        .sideboard_guides
        .revise(first.id, guide_archived(true, at))
        .await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [false, true]);
    repos
        .sideboard_guides
        .revise(second.id, guide_archived(true, at))
        .await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [false, false]);
    let with_flag = |wanted: bool| {
        let mut query = list_query(Some(alice.id));
        query.filters.has_sideboard_guide = Some(wanted);
        query
    };
    assert!(names(&repos.decks.list(&with_flag(true)).await?).is_empty());
    repos
        .sideboard_guides
        .revise(first.id, guide_archived(false, at))
        .await?;
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [true, true]);
    assert_eq!(
        names(&repos.decks.list(&with_flag(true)).await?),
        ["A", "B"]
    );

    assert!(
        !repos
            .sideboard_guides
            .detach(
                first.id,
                a.id,
                &fixtures::change(EventType::GuideDeckDetached, at)
            )
            .await?,
        "the primary deck stays"
    );
    assert!(
        repos
            .sideboard_guides
            .detach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckDetached, at)
            )
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .detach(
                first.id,
                b.id,
                &fixtures::change(EventType::GuideDeckDetached, at)
            )
            .await?
    );
    // The second guide, which still has b, is archived.
    assert_eq!(flags(repos, &[a.id, b.id]).await?, [true, false]);
    assert_eq!(names(&repos.decks.list(&with_flag(false)).await?), ["B"]);
    Ok(())
}

pub async fn guide_lists_show_public_and_own_guides_never_archived_ones(
    repos: &Repositories,
) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (a, b) = (deck(&alice, "A"), deck(&bob, "B"));
    repos.decks.insert(&a).await?;
    repos.decks.insert(&b).await?;
    let mut guides = Vec::new();
    for (owner, primary, name, visibility) in [
        (&alice, a.id, "a-public", Visibility::Public),
        (&alice, a.id, "a-unlisted", Visibility::Unlisted),
        (&alice, a.id, "a-private", Visibility::Private),
        (&bob, b.id, "b-public", Visibility::Public),
        (&bob, b.id, "b-private", Visibility::Private),
        (&bob, b.id, "b-archived", Visibility::Public),
    ] {
        let mut new = fixtures::guide(owner, primary, name);
        new.content.visibility = visibility;
        new.content.notes = "long notes".into();
        new.created_at += time::Duration::milliseconds(guides.len() as i64);
        repos.sideboard_guides.insert(&new).await?;
        guides.push(new);
    }
    let mut other_game = deck(&alice, "lorcana deck");
    other_game.game = "lorcana".into();
    repos.decks.insert(&other_game).await?;
    let mut lorcana = fixtures::guide(&alice, other_game.id, "a-lorcana");
    lorcana.game = "lorcana".into();
    repos.sideboard_guides.insert(&lorcana).await?;
    repos
        .sideboard_guides
        .revise(guides[5].id, guide_archived(true, now()))
        .await?;

    let as_alice = repos.sideboard_guides.list(&guide_query(alice.id)).await?;
    assert_eq!(
        guide_names(&as_alice),
        ["a-public", "a-unlisted", "a-private", "b-public"]
    );
    assert_eq!((as_alice.total, as_alice.total_exact), (4, true));
    assert!(
        as_alice
            .items
            .iter()
            .all(|guide| guide.content.notes.is_empty()),
        "lists carry no long texts"
    );
    let as_bob = repos.sideboard_guides.list(&guide_query(bob.id)).await?;
    assert_eq!(guide_names(&as_bob), ["a-public", "b-public", "b-private"]);
    // Archived guides leave lists but stay readable by id.
    assert!(
        repos
            .sideboard_guides
            .find(guides[5].id)
            .await?
            .is_some_and(|guide| guide.is_archived)
    );
    Ok(())
}

pub async fn guide_lists_filter_sort_and_page_stably(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (a, b, extra) = (deck(&alice, "A"), deck(&bob, "B"), deck(&bob, "Extra"));
    let mut summarised = a.clone();
    summarised.summary.colors = vec!["G".into()];
    repos.decks.insert(&summarised).await?;
    repos.decks.insert(&b).await?;
    repos.decks.insert(&extra).await?;
    let created = datetime!(2026-06-01 12:00 UTC);
    let mut ids = Vec::new();
    for (index, (owner, primary, name, format, video, archetype)) in [
        (
            &alice,
            a.id,
            "Burn 50%",
            Some("Modern"),
            false,
            Some("Control"),
        ),
        (&alice, a.id, "burn_it_all", Some("Pioneer"), true, None),
        (
            &bob,
            b.id,
            "BURNING Bridges",
            Some("modern horizons"),
            true,
            Some("Big Mana"),
        ),
        (&bob, b.id, "Control", None, false, Some("control")),
    ]
    .into_iter()
    .enumerate()
    {
        let mut new = fixtures::guide(owner, primary, name);
        // Two guides share a creation instant: the id breaks the tie.
        new.created_at = created + time::Duration::hours(index.min(2) as i64);
        new.content.format = format.map(str::to_owned);
        new.content.youtube_url = video.then(|| "https://youtu.be/v".to_owned());
        new.matchups = vec![matchup("Opponent", archetype, 0)];
        repos.sideboard_guides.insert(&new).await?;
        ids.push(new.id);
    }
    repos
        .sideboard_guides
        .attach(
            ids[3],
            extra.id,
            &fixtures::change(
                EventType::GuideDeckAttached,
                created + time::Duration::days(1),
            ),
        )
        .await?;
    let with = |change: &dyn Fn(&mut GuideQuery)| {
        let mut query = guide_query(alice.id);
        change(&mut query);
        query
    };
    let list = async |query: GuideQuery| repos.sideboard_guides.list(&query).await;

    let burn = list(with(&|q| q.filters.name_contains = Some("bUrN".into()))).await?;
    assert_eq!(
        guide_names(&burn),
        ["Burn 50%", "burn_it_all", "BURNING Bridges"]
    );
    let percent = list(with(&|q| q.filters.name_contains = Some("50%".into()))).await?;
    assert_eq!(guide_names(&percent), ["Burn 50%"]);
    let control = list(with(&|q| {
        q.filters.opponent_archetype_contains = Some("CONTROL".into());
    }))
    .await?;
    assert_eq!(guide_names(&control), ["Burn 50%", "Control"]);
    let bobs = list(with(&|q| q.filters.author = Some(bob.id))).await?;
    assert_eq!(guide_names(&bobs), ["BURNING Bridges", "Control"]);
    let modern = list(with(&|q| q.filters.format_contains = Some("modern".into()))).await?;
    assert_eq!(guide_names(&modern), ["Burn 50%", "BURNING Bridges"]);
    let videos = list(with(&|q| q.filters.has_video = Some(true))).await?;
    assert_eq!(guide_names(&videos), ["burn_it_all", "BURNING Bridges"]);
    let no_video = list(with(&|q| q.filters.has_video = Some(false))).await?;
    assert_eq!(guide_names(&no_video), ["Burn 50%", "Control"]);
    let with_deck = list(with(&|q| q.filters.deck = Some(extra.id))).await?;
    assert_eq!(guide_names(&with_deck), ["Control"]);
    let with_primary = list(with(&|q| q.filters.deck = Some(b.id))).await?;
    assert_eq!(guide_names(&with_primary), ["BURNING Bridges", "Control"]);
    let window = list(with(&|q| {
        q.filters.created_after = Some(created + time::Duration::hours(1));
        q.filters.created_before = Some(created + time::Duration::hours(2));
    }))
    .await?;
    assert_eq!(window.total, 3, "both bounds are inclusive");
    let edited = list(with(&|q| {
        q.filters.edited_after = Some(created + time::Duration::days(1));
        q.filters.edited_before = Some(created + time::Duration::days(1));
    }))
    .await?;
    assert_eq!(guide_names(&edited), ["Control"], "the attach edited it");

    let descending = list(with(&|q| q.order = SortOrder::Desc)).await?;
    let mut tied = [ids[2], ids[3]];
    tied.sort();
    tied.reverse();
    let expected: Vec<GuideId> = [tied[0], tied[1], ids[1], ids[0]].into();
    let got: Vec<GuideId> = descending.items.iter().map(|guide| guide.id).collect();
    assert_eq!(got, expected);
    let by_edit = list(with(&|q| {
        q.sort = GuideSort::EditedAt;
        q.order = SortOrder::Desc;
        q.page = PageRequest { page: 1, limit: 1 };
    }))
    .await?;
    assert_eq!(guide_names(&by_edit), ["Control"]);
    // Counters are zero for all: the id decides, in the sort's direction.
    for sort in [GuideSort::Likes, GuideSort::Views] {
        let page = list(with(&|q| q.sort = sort)).await?;
        let mut sorted = ids.clone();
        sorted.sort();
        let got: Vec<GuideId> = page.items.iter().map(|guide| guide.id).collect();
        assert_eq!(got, sorted);
    }

    let second_page = list(with(&|q| {
        q.order = SortOrder::Desc;
        q.page = PageRequest { page: 2, limit: 3 };
    }))
    .await?;
    let got: Vec<GuideId> = second_page.items.iter().map(|guide| guide.id).collect();
    assert_eq!(got, [ids[0]]);
    assert_eq!((second_page.total, second_page.total_exact), (4, true));
    let past_the_end = list(with(&|q| q.page = PageRequest { page: 3, limit: 3 })).await?;
    assert!(past_the_end.items.is_empty());
    assert_eq!(past_the_end.total, 4);

    let plain = list(with(&|_| {})).await?;
    assert!(
        plain
            .items
            .iter()
            .all(|guide| guide.primary_summary.is_none())
    );
    assert!(plain.items.iter().all(|guide| guide.matchup_count == 1));
    let summarised = list(with(&|q| q.with_summary = true)).await?;
    assert_eq!(
        summarised.items[0]
            .primary_summary
            .as_ref()
            .map(|s| s.colors.clone()),
        Some(vec!["G".to_owned()])
    );
    Ok(())
}

pub async fn matchups_are_added_revised_and_deleted_on_their_guide_only(
    repos: &Repositories,
) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let a = deck(&alice, "A");
    repos.decks.insert(&a).await?;
    let (first, second) = (
        fixtures::guide(&alice, a.id, "first"),
        fixtures::guide(&alice, a.id, "second"),
    );
    repos.sideboard_guides.insert(&first).await?;
    repos.sideboard_guides.insert(&second).await?;
    let added_at = datetime!(2026-07-01 10:00:00.000_001 UTC);
    let new = matchup("Burn", Some("Aggro"), 3);
    let added = repos
        .sideboard_guides
        .add_matchup(
            first.id,
            &new,
            &fixtures::change(EventType::GuideMatchupCreated, added_at),
        )
        .await?;
    assert_eq!(
        (added.id, added.guide_id, added.created_at),
        (new.id, first.id, added_at)
    );
    assert_eq!(added.content, new.content);

    let edited_at = added_at + time::Duration::minutes(5);
    let revised = repos
        .sideboard_guides
        .revise_matchup(
            first.id,
            new.id,
            Box::new(|content: &MatchupContent| MatchupContent {
                difficulty: Difficulty::VeryEasy,
                opponent_archetype: None,
                special_card_overrides: Vec::new(),
                ..content.clone()
            }),
            &fixtures::change(EventType::GuideMatchupUpdated, edited_at),
        )
        .await?;
    assert_eq!(revised.content.difficulty, Difficulty::VeryEasy);
    assert_eq!(revised.content.opponent_archetype, None);
    assert_eq!(revised.content.play_notes, new.content.play_notes);
    assert_eq!(revised.created_at, added_at);
    let detail = repos
        .sideboard_guides
        .detail(first.id)
        .await?
        .context("first")?;
    assert_eq!(detail.matchups, std::slice::from_ref(&revised));
    assert_eq!(detail.guide.updated_at, edited_at);

    let elsewhere = repos
        .sideboard_guides
        .revise_matchup(
            second.id,
            new.id,
            Box::new(|c| c.clone()),
            &fixtures::change(EventType::GuideMatchupUpdated, edited_at),
        )
        .await;
    assert!(matches!(elsewhere, Err(ReviseMatchupError::NotFound)));
    assert!(
        !repos
            .sideboard_guides
            .delete_matchup(
                second.id,
                new.id,
                &fixtures::change(EventType::GuideMatchupDeleted, edited_at)
            )
            .await?
    );
    assert!(
        repos
            .sideboard_guides
            .delete_matchup(
                first.id,
                new.id,
                &fixtures::change(EventType::GuideMatchupDeleted, edited_at)
            )
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .delete_matchup(
                first.id,
                new.id,
                &fixtures::change(EventType::GuideMatchupDeleted, edited_at)
            )
            .await?
    );
    let detail = repos
        .sideboard_guides
        .detail(first.id)
        .await?
        .context("first")?;
    assert!(detail.matchups.is_empty());
    assert_eq!(detail.guide.matchup_count, 0);
    Ok(())
}

pub async fn revising_a_missing_guide_is_not_found(repos: &Repositories) -> Outcome {
    let outcome = repos
        .sideboard_guides
        .revise(GuideId(Uuid::now_v7()), guide_archived(true, now()))
        .await;
    assert!(matches!(outcome, Err(ReviseGuideError::NotFound)));
    Ok(())
}
