//! The event log's contract: every change writes its event with it, in commit order; the feed
//! judges each event by its subject as it is now; pruning expires old cursors; a waiting
//! reader is woken.

use std::time::Duration;

use anyhow::Context as _;
use deckhand_domain::decks::ports::RevisionRefused;
use deckhand_domain::decks::{Visibility, events as deck_events};
use deckhand_domain::events::{Cursor, Event, EventType, FeedQuery, FeedReader, News, TypeFilter};
use deckhand_domain::identity::UserId;
use deckhand_domain::ports::Repositories;
use deckhand_domain::sideboards::events as guide_events;
use deckhand_domain::sideboards::ports::NewMatchup;
use deckhand_domain::sideboards::{Difficulty, MatchupContent, MatchupId};
use serde_json::json;
use uuid::Uuid;

use super::support::Outcome;
use crate::fixtures::{self, deck, now, origin, revision_of, update_to, user};

/// Every event after `sequence`, in order.
async fn log_after(repos: &Repositories, sequence: i64) -> anyhow::Result<Vec<Event>> {
    repos.events.after(sequence, 1000).await
}

fn types(events: &[Event]) -> Vec<EventType> {
    events.iter().map(|event| event.record.event_type).collect()
}

fn matchup() -> NewMatchup {
    NewMatchup {
        id: MatchupId(Uuid::now_v7()),
        content: MatchupContent {
            opponent_deck_name: "Burn".into(),
            opponent_archetype: None,
            difficulty: Difficulty::Hard,
            notes: String::new(),
            play_notes: String::new(),
            draw_notes: String::new(),
            sort_order: 0,
            thumbnail: None,
            is_featured: false,
            special_card_overrides: Vec::new(),
        },
    }
}

pub async fn every_change_writes_its_event_and_a_refused_one_none(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let start = repos.events.after(0, 1000).await?.len();
    assert_eq!(start, 0, "a fresh store has no events");

    let first = deck(&alice, "First");
    repos.decks.insert(&first).await?;
    let second = deck(&alice, "Second");
    repos.decks.insert(&second).await?;
    repos
        .decks
        .revise(first.id, update_to("Renamed", now()))
        .await?;
    let refused = repos
        .decks
        .revise(first.id, Box::new(|_| Err(RevisionRefused::NotFound)))
        .await;
    assert!(refused.is_err());
    let strategy =
        |deleted| deck_events::strategy_guide(&origin(), "mtg", first.id, deleted, now());
    let guide_text = deckhand_domain::decks::DeckGuide {
        id: Uuid::now_v7(),
        deck_id: first.id,
        content_type: deckhand_domain::decks::ContentType::Markdown,
        content: "# Plan".into(),
        is_premium: false,
        created_at: now(),
        updated_at: now(),
    };
    repos.decks.put_guide(&guide_text, &strategy(false)).await?;
    assert!(repos.decks.delete_guide(first.id, &strategy(true)).await?);
    assert!(!repos.decks.delete_guide(first.id, &strategy(true)).await?);

    let guide = fixtures::guide(&alice, first.id, "Plan");
    repos.sideboard_guides.insert(&guide).await?;
    repos
        .sideboard_guides
        .revise(guide.id, fixtures::guide_archived(true, now()))
        .await?;
    let membership = |attached| {
        guide_events::deck_membership(&origin(), "mtg", guide.id, second.id, attached, now())
    };
    assert!(
        repos
            .sideboard_guides
            .attach(guide.id, second.id, &membership(true))
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .attach(guide.id, second.id, &membership(true))
            .await?
    );
    assert!(
        repos
            .sideboard_guides
            .detach(guide.id, second.id, &membership(false))
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .detach(guide.id, second.id, &membership(false))
            .await?
    );
    let added = matchup();
    let matchup_event =
        |kind| guide_events::matchup(&origin(), kind, "mtg", guide.id, added.id, now());
    repos
        .sideboard_guides
        .add_matchup(
            guide.id,
            &added,
            &matchup_event(EventType::GuideMatchupCreated),
        )
        .await?;
    repos
        .sideboard_guides
        .revise_matchup(
            guide.id,
            added.id,
            Box::new(|content| content.clone()),
            &matchup_event(EventType::GuideMatchupUpdated),
        )
        .await?;
    let deleted = matchup_event(EventType::GuideMatchupDeleted);
    assert!(
        repos
            .sideboard_guides
            .delete_matchup(guide.id, added.id, &deleted)
            .await?
    );
    assert!(
        !repos
            .sideboard_guides
            .delete_matchup(guide.id, added.id, &deleted)
            .await?
    );
    let imported = origin().record(
        EventType::CatalogImported,
        "mtg",
        None,
        now(),
        json!({"cards": 1, "printings": 2}),
    );
    repos.catalog.record_import(&imported).await?;

    let log = log_after(repos, 0).await?;
    assert_eq!(
        types(&log),
        [
            EventType::DeckCreated,
            EventType::DeckCreated,
            EventType::DeckUpdated,
            EventType::DeckStrategyGuideUpdated,
            EventType::DeckStrategyGuideDeleted,
            EventType::GuideCreated,
            EventType::GuideUpdated,
            EventType::GuideDeckAttached,
            EventType::GuideDeckDetached,
            EventType::GuideMatchupCreated,
            EventType::GuideMatchupUpdated,
            EventType::GuideMatchupDeleted,
            EventType::CatalogImported,
        ]
    );
    assert!(
        log.windows(2)
            .all(|pair| pair[0].sequence < pair[1].sequence)
            && log[0].sequence > 0,
        "ascending positive sequences: {:?}",
        log.iter().map(|event| event.sequence).collect::<Vec<_>>()
    );
    assert_eq!(log[0].record, first.event, "stored as handed over");
    assert_eq!(log[2].record.subject_id, Some(first.id.0));
    assert_eq!(
        log[2].record.data,
        json!({"version": 2, "changed": ["name"]})
    );
    assert_eq!(log[6].record.data, json!({"changed": ["is_archived"]}));
    assert_eq!(log[12].record, imported);
    assert_eq!(log_after(repos, log[11].sequence).await?.len(), 1);
    Ok(())
}

fn feed_query(reader: FeedReader, after: i64) -> FeedQuery {
    FeedQuery {
        game: "mtg".into(),
        after: Some(Cursor { sequence: after }),
        types: TypeFilter::all(),
        limit: 100,
        reader,
    }
}

fn reader(viewer: UserId, deck_events: bool, guide_events: bool) -> FeedReader {
    FeedReader {
        viewer: Some(viewer),
        deck_events,
        guide_events,
        collection_viewer: None,
    }
}

async fn subjects(repos: &Repositories, query: &FeedQuery) -> anyhow::Result<Vec<Option<Uuid>>> {
    let scan = repos.events.scan(query).await?;
    let page = scan.page(query).context("a live cursor")?;
    Ok(page
        .events
        .iter()
        .map(|event| event.record.subject_id)
        .collect())
}

pub async fn the_feed_shows_each_reader_what_it_may_read_now(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let open = deck(&alice, "Open");
    let mut hidden = deck(&alice, "Hidden");
    hidden.content.visibility = Visibility::Private;
    for new in [&open, &hidden] {
        repos.decks.insert(new).await?;
    }
    let guide = fixtures::guide(&alice, open.id, "Plan");
    repos.sideboard_guides.insert(&guide).await?;
    let imported = origin().record(EventType::CatalogImported, "mtg", None, now(), json!({}));
    repos.catalog.record_import(&imported).await?;
    let other_game = origin().record(EventType::CatalogImported, "other", None, now(), json!({}));
    repos.catalog.record_import(&other_game).await?;

    let all = [Some(open.id.0), Some(hidden.id.0), Some(guide.id.0), None];
    assert_eq!(
        subjects(repos, &feed_query(reader(alice.id, true, true), 0)).await?,
        all
    );
    assert_eq!(
        subjects(repos, &feed_query(reader(bob.id, true, true), 0)).await?,
        [Some(open.id.0), Some(guide.id.0), None]
    );
    assert_eq!(
        subjects(repos, &feed_query(reader(alice.id, false, true), 0)).await?,
        [Some(guide.id.0), None],
        "deck events need decks:read"
    );
    assert_eq!(
        subjects(repos, &feed_query(reader(alice.id, true, false), 0)).await?,
        [Some(open.id.0), Some(hidden.id.0), None],
        "guide events need sideboards:read"
    );
    let mut only_decks = feed_query(reader(alice.id, true, true), 0);
    only_decks.types = TypeFilter::parse("deck.*")?;
    assert_eq!(subjects(repos, &only_decks).await?, all[..2]);
    // The scan window counts every event of the game, whatever its type: a filter on a rare
    // type walks one window per page, never the rest of the log.
    let in_game = log_after(repos, 0)
        .await?
        .iter()
        .filter(|event| event.record.game == "mtg")
        .count();
    let scan = repos.events.scan(&only_decks).await?;
    assert_eq!(scan.scanned as usize, in_game);

    // Visibility is judged now: once the open deck turns private, bob no longer sees its
    // events, not even the old ones; archived, it stays readable by id.
    let private = |deck: &deckhand_domain::decks::Deck| {
        let mut content = deck.content.clone();
        content.visibility = Visibility::Private;
        Ok(revision_of(
            deck,
            content,
            deckhand_domain::decks::HistoryType::Update,
            now(),
        ))
    };
    repos.decks.revise(open.id, Box::new(private)).await?;
    assert_eq!(
        subjects(repos, &feed_query(reader(bob.id, true, true), 0)).await?,
        [Some(guide.id.0), None]
    );
    repos
        .sideboard_guides
        .revise(guide.id, fixtures::guide_archived(true, now()))
        .await?;
    assert_eq!(
        subjects(repos, &feed_query(reader(bob.id, true, true), 0)).await?,
        [Some(guide.id.0), None, Some(guide.id.0)]
    );

    // A page that hides everything after the cursor still moves it to the end of the log.
    let log = log_after(repos, 0).await?;
    let last = log.last().context("events")?.sequence;
    let query = feed_query(reader(bob.id, true, false), log[1].sequence);
    let scan = repos.events.scan(&query).await?;
    let page = scan.page(&query).context("a live cursor")?;
    assert_eq!(page.events.len(), 1, "the catalog import");
    assert!(!page.has_more);
    assert_eq!(page.next, Cursor { sequence: last });

    // Each game's feed holds its own events only.
    let mut other = feed_query(reader(alice.id, true, true), 0);
    other.game = "other".into();
    assert_eq!(subjects(repos, &other).await?, [None]);
    Ok(())
}

pub async fn pruned_events_expire_the_cursors_before_them(repos: &Repositories) -> Outcome {
    let at = |days| now() - time::Duration::days(days);
    let record =
        |days| origin().record(EventType::CatalogImported, "mtg", None, at(days), json!({}));
    for days in [40, 35, 31, 2] {
        repos.catalog.record_import(&record(days)).await?;
    }
    let log = log_after(repos, 0).await?;
    assert_eq!(repos.events.prune(at(30), 2).await?, 2);
    assert_eq!(repos.events.prune(at(30), 2).await?, 1);
    assert_eq!(repos.events.prune(at(30), 2).await?, 0);
    assert_eq!(log_after(repos, 0).await?, log[3..]);
    let alice = user("alice");
    let query = |after| feed_query(reader(alice.id, true, true), after);
    for (after, expired) in [(0, true), (log[1].sequence, true), (log[2].sequence, false)] {
        let scan = repos.events.scan(&query(after)).await?;
        assert_eq!(scan.page(&query(after)).is_none(), expired, "after {after}");
    }
    Ok(())
}

pub async fn a_waiting_reader_wakes_when_an_event_commits(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let last = log_after(repos, 0)
        .await?
        .last()
        .map_or(0, |event| event.sequence);
    let events = repos.events.clone();
    let started = std::time::Instant::now();
    let waiting =
        tokio::spawn(async move { events.wait_for_news(last, Duration::from_secs(20)).await });
    // Until something commits the reader keeps waiting (it may wake early, never late).
    tokio::time::sleep(Duration::from_millis(200)).await;
    repos.decks.insert(&deck(&alice, "News")).await?;
    // The first wait may also end early as `Unknown` (the store's listener connecting), after
    // which a reader asks again.
    let mut heard = tokio::time::timeout(Duration::from_secs(10), waiting).await???;
    while heard == News::Unknown && started.elapsed() < Duration::from_secs(10) {
        heard = repos
            .events
            .wait_for_news(last, Duration::from_secs(1))
            .await?;
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    // The news names the event's game and type, so a reader who wants neither reads nothing.
    let announced = |news: &News| match news {
        News::Heard(heard) => heard
            .iter()
            .map(|news| (news.sequence, news.game.clone(), news.event_type))
            .collect(),
        News::Quiet | News::Unknown => Vec::new(),
    };
    assert_eq!(
        announced(&heard),
        [(last + 1, "mtg".to_owned(), EventType::DeckCreated)],
        "{heard:?}"
    );
    // With news already there, a wait returns at once.
    let quick = std::time::Instant::now();
    let again = repos
        .events
        .wait_for_news(last, Duration::from_secs(20))
        .await?;
    assert!(quick.elapsed() < Duration::from_secs(5));
    assert_eq!(announced(&again), announced(&heard));
    Ok(())
}
