//! The read rules, held to one answer by both stores. For random decks and guides (owners,
//! visibility, archived state, flags, likes and counted views) and random viewers and list
//! queries, the memory store (which evaluates the domain's own predicates) and PostgreSQL (which
//! runs their translation in `postgres::rules`) must agree on every list page: the same items, in
//! the same order, with the same totals; and on which decks each viewer may like or view.

use deckhand_domain::decks::ports::{NewDeck, Reviser, Revision};
use deckhand_domain::decks::{
    Deck, DeckFilters, DeckId, DeckQuery, DeckReader, DeckSort, HistoryType, PageRequest,
    SortOrder, Visibility, trending,
};
use deckhand_domain::events::EventType;
use deckhand_domain::identity::User;
use deckhand_domain::ports::Repositories;
use deckhand_domain::sideboards::ports::{GuideReviser, GuideRevision, NewGuide};
use deckhand_domain::sideboards::{
    GuideContent, GuideFilters, GuideId, GuideQuery, GuideSort, SideboardGuide,
};
use deckhand_testkit::db::TestDb;
use deckhand_testkit::fixtures::{change, deck, origin, revision_of, user};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use time::macros::datetime;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// The first instant of every generated history; items are created hours after it.
const EPOCH: OffsetDateTime = datetime!(2026-06-01 00:00 UTC);
const USERS: usize = 3;
const NAMES: [&str; 6] = [
    "Izzet Phoenix",
    "izzet tempo",
    "Mono Red",
    "Phoenix 50%",
    "Control",
    "red_deck_wins",
];
const NEEDLES: [&str; 4] = ["izzet", "PHOENIX", "50%", "d_d"];

#[derive(Debug, Clone)]
struct DeckSpec {
    owner: usize,
    name: usize,
    visibility: Visibility,
    archived: bool,
    legal: bool,
    video: bool,
    created_hour: i64,
    /// Users who try to like the deck (only those who may read it succeed).
    likers: Vec<usize>,
    /// Counted views: who views (`None`: an anonymous visitor of that number) and at which hour.
    views: Vec<(Option<usize>, u8, i64)>,
}

#[derive(Debug, Clone)]
struct GuideSpec {
    /// The primary deck: its owner owns the guide.
    primary: usize,
    name: usize,
    visibility: Visibility,
    archived: bool,
    created_hour: i64,
}

#[derive(Debug, Clone)]
struct DeckListSpec {
    viewer: Option<usize>,
    sort: DeckSort,
    order: SortOrder,
    page: PageRequest,
    author: Option<usize>,
    name_contains: Option<usize>,
    is_legal: Option<bool>,
    has_video: Option<bool>,
    created_after_hour: Option<i64>,
}

#[derive(Debug, Clone)]
struct GuideListSpec {
    viewer: usize,
    sort: GuideSort,
    order: SortOrder,
    page: PageRequest,
    author: Option<usize>,
    deck: Option<usize>,
    name_contains: Option<usize>,
}

#[derive(Debug, Clone)]
struct World {
    decks: Vec<DeckSpec>,
    guides: Vec<GuideSpec>,
    deck_lists: Vec<DeckListSpec>,
    guide_lists: Vec<GuideListSpec>,
}

fn visibility() -> impl Strategy<Value = Visibility> {
    prop_oneof![
        Just(Visibility::Public),
        Just(Visibility::Unlisted),
        Just(Visibility::Private)
    ]
}

fn user_index() -> impl Strategy<Value = usize> {
    0..USERS
}

fn page() -> impl Strategy<Value = PageRequest> {
    (1u32..=3, 1u32..=5).prop_map(|(page, limit)| PageRequest { page, limit })
}

fn order() -> impl Strategy<Value = SortOrder> {
    prop_oneof![Just(SortOrder::Asc), Just(SortOrder::Desc)]
}

fn deck_spec() -> impl Strategy<Value = DeckSpec> {
    (
        user_index(),
        0..NAMES.len(),
        visibility(),
        prop::bool::weighted(0.2),
        any::<bool>(),
        any::<bool>(),
        // Few hours, so that creation instants tie and the id must break the tie.
        0i64..4,
        prop::collection::vec(user_index(), 0..3),
        prop::collection::vec((prop::option::of(user_index()), 0u8..3, 0i64..3), 0..4),
    )
        .prop_map(
            |(owner, name, visibility, archived, legal, video, created_hour, likers, views)| {
                DeckSpec {
                    owner,
                    name,
                    visibility,
                    archived,
                    legal,
                    video,
                    created_hour,
                    likers,
                    views,
                }
            },
        )
}

fn world() -> impl Strategy<Value = World> {
    prop::collection::vec(deck_spec(), 1..14).prop_flat_map(|decks| {
        let count = decks.len();
        let guide = (
            0..count,
            0..NAMES.len(),
            visibility(),
            prop::bool::weighted(0.2),
            0i64..4,
        )
            .prop_map(
                |(primary, name, visibility, archived, created_hour)| GuideSpec {
                    primary,
                    name,
                    visibility,
                    archived,
                    created_hour,
                },
            );
        let deck_list = (
            prop::option::of(user_index()),
            prop_oneof![
                Just(DeckSort::CreatedAt),
                Just(DeckSort::EditedAt),
                Just(DeckSort::Likes),
                Just(DeckSort::Views),
                Just(DeckSort::Trending)
            ],
            order(),
            page(),
            prop::option::weighted(0.3, user_index()),
            prop::option::weighted(0.3, 0..NEEDLES.len()),
            prop::option::weighted(0.3, any::<bool>()),
            prop::option::weighted(0.3, any::<bool>()),
            prop::option::weighted(0.3, 0i64..4),
        )
            .prop_map(
                |(
                    viewer,
                    sort,
                    order,
                    page,
                    author,
                    name_contains,
                    is_legal,
                    has_video,
                    created_after_hour,
                )| DeckListSpec {
                    viewer,
                    sort,
                    order,
                    page,
                    author,
                    name_contains,
                    is_legal,
                    has_video,
                    created_after_hour,
                },
            );
        let guide_list = (
            user_index(),
            prop_oneof![
                Just(GuideSort::CreatedAt),
                Just(GuideSort::EditedAt),
                Just(GuideSort::Likes),
                Just(GuideSort::Views)
            ],
            order(),
            page(),
            prop::option::weighted(0.3, user_index()),
            prop::option::weighted(0.3, 0..count),
            prop::option::weighted(0.3, 0..NEEDLES.len()),
        )
            .prop_map(
                |(viewer, sort, order, page, author, deck, name_contains)| GuideListSpec {
                    viewer,
                    sort,
                    order,
                    page,
                    author,
                    deck,
                    name_contains,
                },
            );
        (
            Just(decks),
            prop::collection::vec(guide, 0..6),
            prop::collection::vec(deck_list, 12),
            prop::collection::vec(guide_list, 6),
        )
            .prop_map(|(decks, guides, deck_lists, guide_lists)| World {
                decks,
                guides,
                deck_lists,
                guide_lists,
            })
    })
}

fn at_hour(hour: i64) -> OffsetDateTime {
    EPOCH + Duration::hours(hour)
}

fn archived_at(at: OffsetDateTime) -> Reviser {
    Box::new(move |deck: &Deck| {
        Ok(Revision {
            is_archived: true,
            ..revision_of(deck, deck.content.clone(), HistoryType::Update, at)
        })
    })
}

fn guide_archived_at(at: OffsetDateTime) -> GuideReviser {
    Box::new(move |guide: &SideboardGuide| GuideRevision {
        content: guide.content.clone(),
        is_archived: true,
        at,
        origin: origin(),
    })
}

/// The same users, decks and guides, with the same ids and instants, in each store; returns
/// what each store answered to each attempt to like or view (which the read rule decides).
struct Seeded {
    users: Vec<User>,
    decks: Vec<NewDeck>,
    guides: Vec<GuideId>,
}

fn seed_values(world: &World) -> (Vec<User>, Vec<NewDeck>, Vec<NewGuide>) {
    let users: Vec<User> = ["ada", "bea", "cal"].into_iter().map(user).collect();
    let decks: Vec<NewDeck> = world
        .decks
        .iter()
        .map(|spec| {
            let mut new = deck(&users[spec.owner], NAMES[spec.name]);
            new.content.visibility = spec.visibility;
            new.content.legal = spec.legal;
            new.content.youtube_url = spec.video.then(|| "https://youtu.be/v".to_owned());
            new.created_at = at_hour(spec.created_hour);
            new
        })
        .collect();
    let guides = world
        .guides
        .iter()
        .map(|spec| {
            let primary = &decks[spec.primary];
            NewGuide {
                id: GuideId(Uuid::now_v7()),
                game: "mtg".into(),
                owner: primary.owner,
                content: GuideContent {
                    name: NAMES[spec.name].into(),
                    description: String::new(),
                    notes: String::new(),
                    visibility: spec.visibility,
                    tags: Vec::new(),
                    format: None,
                    thumbnail: None,
                    youtube_url: None,
                    premium: false,
                },
                primary_deck: primary.id,
                matchups: Vec::new(),
                created_at: at_hour(spec.created_hour),
                event: change(EventType::GuideCreated, at_hour(spec.created_hour)),
            }
        })
        .collect();
    (users, decks, guides)
}

/// Writes `world` into `repos`; returns the outcome of every like and view, in order.
async fn seed(
    repos: &Repositories,
    world: &World,
    (users, decks, guides): &(Vec<User>, Vec<NewDeck>, Vec<NewGuide>),
) -> anyhow::Result<Vec<(bool, bool)>> {
    for user in users {
        repos.users.insert(user).await?;
    }
    let mut outcomes = Vec::new();
    for (spec, new) in world.decks.iter().zip(decks) {
        repos
            .decks
            .insert(new)
            .await
            .map_err(|error| anyhow::anyhow!("{error:?}"))?;
        for &liker in &spec.likers {
            let reader = DeckReader {
                game: "mtg".into(),
                viewer: Some(users[liker].id),
            };
            let liked = repos
                .decks
                .set_like(new.id, &reader, users[liker].id, true, at_hour(5))
                .await?;
            outcomes.push((liked, false));
        }
        for &(viewer, visitor, hour) in &spec.views {
            let reader = DeckReader {
                game: "mtg".into(),
                viewer: viewer.map(|index| users[index].id),
            };
            let now = at_hour(6 + hour);
            let counted = repos
                .decks
                .count_view(
                    new.id,
                    &reader,
                    &[visitor; 32],
                    now,
                    Duration::minutes(30),
                    trending::view_weight(now),
                )
                .await?;
            outcomes.push((
                counted.is_some(),
                counted.is_some_and(|count| count.incremented),
            ));
        }
    }
    for (spec, new) in world.decks.iter().zip(decks) {
        if spec.archived {
            repos
                .decks
                .revise(new.id, archived_at(at_hour(10)))
                .await
                .map_err(|error| anyhow::anyhow!("{error:?}"))?;
        }
    }
    for (spec, new) in world.guides.iter().zip(guides) {
        repos.sideboard_guides.insert(new).await?;
        if spec.archived {
            repos
                .sideboard_guides
                .revise(new.id, guide_archived_at(at_hour(11)))
                .await
                .map_err(|error| anyhow::anyhow!("{error:?}"))?;
        }
    }
    Ok(outcomes)
}

fn deck_query(spec: &DeckListSpec, seeded: &Seeded) -> DeckQuery {
    let user = |index: usize| seeded.users[index].id;
    DeckQuery {
        with_summary: false,
        game: "mtg".into(),
        viewer: spec.viewer.map(user),
        filters: DeckFilters {
            author: spec.author.map(user),
            created_after: spec.created_after_hour.map(at_hour),
            is_legal: spec.is_legal,
            has_video: spec.has_video,
            name_contains: spec.name_contains.map(|index| NEEDLES[index].to_owned()),
            ..DeckFilters::default()
        },
        sort: spec.sort,
        order: spec.order,
        page: spec.page,
    }
}

fn guide_query(spec: &GuideListSpec, seeded: &Seeded) -> GuideQuery {
    GuideQuery {
        game: "mtg".into(),
        viewer: seeded.users[spec.viewer].id,
        filters: GuideFilters {
            author: spec.author.map(|index| seeded.users[index].id),
            deck: spec.deck.map(|index| seeded.decks[index].id),
            name_contains: spec.name_contains.map(|index| NEEDLES[index].to_owned()),
            ..GuideFilters::default()
        },
        sort: spec.sort,
        order: spec.order,
        page: spec.page,
        with_summary: false,
    }
}

/// What a page says, in a form two stores can be compared by.
type DeckPageSeen = (Vec<DeckId>, u64, bool);
type GuidePageSeen = (Vec<GuideId>, u64, bool);

async fn lists(
    repos: &Repositories,
    world: &World,
    seeded: &Seeded,
) -> anyhow::Result<(Vec<DeckPageSeen>, Vec<GuidePageSeen>)> {
    let mut decks = Vec::new();
    for spec in &world.deck_lists {
        let page = repos.decks.list(&deck_query(spec, seeded)).await?;
        decks.push((
            page.items.iter().map(|deck| deck.facts.id).collect(),
            page.total,
            page.total_exact,
        ));
    }
    let mut guides = Vec::new();
    for spec in &world.guide_lists {
        let page = repos
            .sideboard_guides
            .list(&guide_query(spec, seeded))
            .await?;
        guides.push((
            page.items.iter().map(|guide| guide.id).collect(),
            page.total,
            page.total_exact,
        ));
    }
    Ok((decks, guides))
}

async fn both_stores_agree(world: World) -> Result<(), TestCaseError> {
    let values = seed_values(&world);
    let seeded = Seeded {
        users: values.0.clone(),
        decks: values.1.clone(),
        guides: values.2.iter().map(|guide| guide.id).collect(),
    };
    let memory = deckhand_memory::repositories();
    let db = TestDb::new().await;
    let postgres = db.repositories();
    let fail = |error: anyhow::Error| TestCaseError::fail(format!("{error:#}"));

    let in_memory = seed(&memory, &world, &values).await.map_err(fail)?;
    let in_postgres = seed(&postgres, &world, &values).await.map_err(fail)?;
    prop_assert_eq!(in_memory, in_postgres, "likes and views decided alike");

    let (memory_decks, memory_guides) = lists(&memory, &world, &seeded).await.map_err(fail)?;
    let (pg_decks, pg_guides) = lists(&postgres, &world, &seeded).await.map_err(fail)?;
    for ((spec, memory), postgres) in world.deck_lists.iter().zip(&memory_decks).zip(&pg_decks) {
        prop_assert_eq!(memory, postgres, "deck list {:?}", spec);
    }
    for ((spec, memory), postgres) in world.guide_lists.iter().zip(&memory_guides).zip(&pg_guides) {
        prop_assert_eq!(memory, postgres, "guide list {:?}", spec);
    }
    prop_assert_eq!(seeded.guides.len(), world.guides.len());
    Ok(())
}

/// Each case seeds a fresh schema, so the case count is what this test costs: 24 worlds of up
/// to 13 decks and 5 guides, 18 list queries each.
#[test]
fn memory_and_postgres_read_by_the_same_rules() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&world(), |world| runtime.block_on(both_stores_agree(world)));
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

/// The property test must see lists that hold something: a world with public decks and an
/// anonymous list finds them in both stores (a sanity check of the harness itself).
#[test]
fn a_plain_world_lists_its_public_decks_in_both_stores() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let spec = DeckSpec {
            owner: 0,
            name: 0,
            visibility: Visibility::Public,
            archived: false,
            legal: true,
            video: false,
            created_hour: 0,
            likers: vec![1],
            views: vec![(None, 1, 0)],
        };
        let world = World {
            decks: vec![
                spec.clone(),
                DeckSpec {
                    visibility: Visibility::Private,
                    ..spec
                },
            ],
            guides: Vec::new(),
            deck_lists: vec![DeckListSpec {
                viewer: None,
                sort: DeckSort::Views,
                order: SortOrder::Desc,
                page: PageRequest { page: 1, limit: 5 },
                author: None,
                name_contains: None,
                is_legal: None,
                has_video: None,
                created_after_hour: None,
            }],
            guide_lists: Vec::new(),
        };
        let values = seed_values(&world);
        let seeded = Seeded {
            users: values.0.clone(),
            decks: values.1.clone(),
            guides: Vec::new(),
        };
        let db = TestDb::new().await;
        for repos in [deckhand_memory::repositories(), db.repositories()] {
            let outcomes = seed(&repos, &world, &values).await.unwrap();
            // The public deck is liked and viewed; the private one neither.
            assert_eq!(
                outcomes,
                [(true, false), (true, true), (false, false), (false, false)]
            );
            let (decks, _) = lists(&repos, &world, &seeded).await.unwrap();
            assert_eq!(decks, [(vec![seeded.decks[0].id], 1, true)]);
        }
    });
}
