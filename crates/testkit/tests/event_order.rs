//! Events reach a reader in commit order and exactly once, on real PostgreSQL: the property a
//! plain `bigserial` would break (docs/events.md). A writer that took its number and has not
//! committed holds back every later writer, so a cursor never passes a number that may still
//! appear; many writers committing in parallel under a paging reader lose and repeat nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test code: a panic is a failure with a message.

use std::collections::BTreeSet;
use std::time::Duration;

use deckhand_domain::events::{Cursor, Event, FeedQuery, FeedReader, TypeFilter};
use deckhand_domain::ports::Repositories;
use deckhand_testkit::db::TestDb;
use deckhand_testkit::fixtures::{deck, now, update_to, user};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

fn everything_for(viewer: deckhand_domain::identity::UserId, after: i64) -> FeedQuery {
    FeedQuery {
        game: "mtg".into(),
        after: Some(Cursor { sequence: after }),
        types: TypeFilter::all(),
        limit: 7,
        reader: FeedReader {
            viewer: Some(viewer),
            deck_events: true,
            guide_events: true,
            collection_viewer: None,
        },
    }
}

/// One page of the feed from `after`: its events and the next cursor.
async fn page(repos: &Repositories, query: &FeedQuery) -> (Vec<Event>, Cursor, bool) {
    let scan = repos.events.scan(query).await.unwrap();
    let page = scan.page(query).expect("a live cursor");
    (page.events, page.next, page.has_more)
}

#[tokio::test]
async fn a_writer_that_has_not_committed_holds_back_the_writers_after_it() {
    let db = TestDb::new().await;
    let repos = db.repositories();
    let alice = user("alice");
    repos.users.insert(&alice).await.unwrap();

    // A write in flight: it took sequence 1 (as every event write does, with the adapter's
    // numbering statement) and has not committed.
    let mut in_flight = AsyncPgConnection::establish(db.url()).await.unwrap();
    in_flight
        .batch_execute(
            "BEGIN; \
             WITH numbered AS (UPDATE event_log SET last_sequence = last_sequence + 1 \
             RETURNING last_sequence) \
             INSERT INTO events (sequence, id, type, subject_kind, game, occurred_at, data) \
             SELECT last_sequence, gen_random_uuid(), 'catalog.imported', 'catalog', 'mtg', \
             now(), '{}' FROM numbered",
        )
        .await
        .unwrap();

    // A later write through the adapter waits for it: with a plain sequence it would commit
    // at once as number 2, a reader would move its cursor to 2, and number 1 would land
    // behind that cursor when the first write commits.
    let later = {
        let repos = repos.clone();
        let new = deck(&alice, "Later");
        tokio::spawn(async move { repos.decks.insert(&new).await.map(|_| ()) })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!later.is_finished(), "the later write committed first");
    let (seen, cursor, _) = page(&repos, &everything_for(alice.id, 0)).await;
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(
        cursor,
        Cursor::START,
        "the cursor passed an uncommitted number"
    );

    in_flight.batch_execute("COMMIT").await.unwrap();
    later.await.unwrap().unwrap();
    let (seen, cursor, _) = page(&repos, &everything_for(alice.id, 0)).await;
    let sequences: Vec<i64> = seen.iter().map(|event| event.sequence).collect();
    assert_eq!(sequences, [1, 2]);
    assert_eq!(cursor, Cursor { sequence: 2 });
}

#[tokio::test]
async fn a_paging_reader_sees_every_event_once_in_order_while_writers_commit() {
    const WRITERS: usize = 8;
    const SAVES: usize = 25;
    let db = TestDb::new().await;
    let repos = db.repositories();
    let alice = user("alice");
    repos.users.insert(&alice).await.unwrap();

    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let repos = repos.clone();
            let new = deck(&alice, &format!("Deck {writer}"));
            tokio::spawn(async move {
                repos.decks.insert(&new).await.unwrap();
                for save in 0..SAVES {
                    let name = format!("Deck {writer} v{save}");
                    repos
                        .decks
                        .revise(new.id, update_to(&name, now()))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();

    let mut seen: Vec<i64> = Vec::new();
    let mut cursor = Cursor::START;
    loop {
        let writing = writers.iter().any(|writer| !writer.is_finished());
        let (events, next, has_more) =
            page(&repos, &everything_for(alice.id, cursor.sequence)).await;
        seen.extend(events.iter().map(|event| event.sequence));
        cursor = next;
        if !writing && !has_more && events.is_empty() {
            break;
        }
    }
    for writer in writers {
        writer.await.unwrap();
    }

    let expected = WRITERS * (SAVES + 1);
    assert!(
        seen.windows(2).all(|pair| pair[0] < pair[1]),
        "out of order or repeated: {seen:?}"
    );
    let logged: BTreeSet<i64> = repos
        .events
        .after(0, 10_000)
        .await
        .unwrap()
        .iter()
        .map(|event| event.sequence)
        .collect();
    assert_eq!(logged.len(), expected);
    assert_eq!(
        seen.into_iter().collect::<BTreeSet<_>>(),
        logged,
        "events skipped"
    );
}
