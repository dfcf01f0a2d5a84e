//! Likes of decks and guides: counted once per user, for what the user may see, with none lost
//! to concurrency.

use anyhow::Context as _;
use deckhand_domain::decks::{DeckId, DeckReader, DeckSort, SortOrder, Visibility};
use deckhand_domain::identity::User;
use deckhand_domain::ports::Repositories;
use deckhand_domain::sideboards::{GuideId, GuideSort};
use uuid::Uuid;

use crate::fixtures::{self, deck, now, user};

use super::support::{Outcome, guide_query, list_query};

pub async fn deck_likes_count_once_per_user_and_follow_the_sort(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let (liked, other) = (deck(&alice, "Liked"), deck(&alice, "Other"));
    let mut hidden = deck(&alice, "Hidden");
    hidden.content.visibility = Visibility::Private;
    for new in [&liked, &other, &hidden] {
        repos.decks.insert(new).await?;
    }
    let reader = |viewer: &User| DeckReader {
        game: "mtg".into(),
        viewer: Some(viewer.id),
    };
    let like = |id: DeckId, by: &User, liked: bool| {
        let (decks, reader, user) = (repos.decks.clone(), reader(by), by.id);
        async move { decks.set_like(id, &reader, user, liked, now()).await }
    };
    let likes = |id: DeckId| {
        let decks = repos.decks.clone();
        async move { anyhow::Ok(decks.find(id).await?.context("the deck")?.facts.likes) }
    };
    // Idempotent per user.
    assert!(like(liked.id, &bob, true).await?);
    assert!(like(liked.id, &bob, true).await?);
    assert!(like(liked.id, &alice, true).await?);
    assert_eq!(likes(liked.id).await?, 2);
    let mut by_likes = list_query(None);
    by_likes.sort = DeckSort::Likes;
    by_likes.order = SortOrder::Desc;
    let page = repos.decks.list(&by_likes).await?;
    assert_eq!(page.items[0].facts.id, liked.id);
    assert_eq!(page.items[0].facts.likes, 2);
    assert!(like(liked.id, &bob, false).await?);
    assert!(like(liked.id, &bob, false).await?);
    assert_eq!(likes(liked.id).await?, 1);
    // Hidden from the liker, another game, or missing: refused, nothing counted.
    assert!(!like(hidden.id, &bob, true).await?);
    assert!(like(hidden.id, &alice, true).await?);
    assert_eq!(likes(hidden.id).await?, 1);
    let elsewhere = DeckReader {
        game: "other".into(),
        viewer: Some(bob.id),
    };
    assert!(
        !repos
            .decks
            .set_like(other.id, &elsewhere, bob.id, true, now())
            .await?
    );
    assert!(!like(DeckId(Uuid::now_v7()), &bob, true).await?);
    assert_eq!(likes(other.id).await?, 0);
    Ok(())
}

pub async fn concurrent_likes_lose_nothing(repos: &Repositories) -> Outcome {
    let owner = user("owner");
    repos.users.insert(&owner).await?;
    let target = deck(&owner, "Popular");
    repos.decks.insert(&target).await?;
    let primary = deck(&owner, "Primary");
    repos.decks.insert(&primary).await?;
    let guide = fixtures::guide(&owner, primary.id, "Popular plan");
    repos.sideboard_guides.insert(&guide).await?;
    let mut fans = Vec::new();
    for index in 0..6 {
        let fan = user(&format!("fan{index}"));
        repos.users.insert(&fan).await?;
        fans.push(fan.id);
    }
    // Every fan likes twice at once, on the deck and the guide.
    let tasks: Vec<_> = fans
        .iter()
        .chain(fans.iter())
        .map(|fan| {
            let (decks, guides, fan) = (repos.decks.clone(), repos.sideboard_guides.clone(), *fan);
            let reader = DeckReader {
                game: "mtg".into(),
                viewer: Some(fan),
            };
            tokio::spawn(async move {
                let deck = decks.set_like(target.id, &reader, fan, true, now()).await?;
                let guide = guides.set_like(guide.id, "mtg", fan, true, now()).await?;
                anyhow::Ok(deck && guide)
            })
        })
        .collect();
    for task in tasks {
        assert!(task.await??);
    }
    let deck_likes = repos
        .decks
        .find(target.id)
        .await?
        .context("the deck")?
        .facts
        .likes;
    let guide_likes = repos
        .sideboard_guides
        .find(guide.id)
        .await?
        .context("the guide")?
        .likes;
    assert_eq!((deck_likes, guide_likes), (6, 6));
    Ok(())
}

pub async fn guide_likes_count_once_per_user_for_visible_guides(repos: &Repositories) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let primary = deck(&alice, "Primary");
    repos.decks.insert(&primary).await?;
    let public = fixtures::guide(&alice, primary.id, "Public plan");
    let mut private = fixtures::guide(&alice, primary.id, "Private plan");
    private.content.visibility = Visibility::Private;
    let before = repos.sideboard_guides.insert(&public).await?;
    repos.sideboard_guides.insert(&private).await?;
    let guides = &repos.sideboard_guides;
    assert!(
        guides
            .set_like(public.id, "mtg", bob.id, true, now())
            .await?
    );
    assert!(
        guides
            .set_like(public.id, "mtg", bob.id, true, now())
            .await?
    );
    let after = guides.find(public.id).await?.context("the guide")?;
    // A like is no edit.
    assert_eq!(
        (after.likes, after.updated_at),
        (1, before.guide.updated_at)
    );
    let mut by_likes = guide_query(bob.id);
    by_likes.sort = GuideSort::Likes;
    by_likes.order = SortOrder::Desc;
    let page = guides.list(&by_likes).await?;
    assert_eq!(
        page.items
            .iter()
            .map(|g| (g.id, g.likes))
            .collect::<Vec<_>>(),
        [(public.id, 1)]
    );
    assert!(
        guides
            .set_like(public.id, "mtg", bob.id, false, now())
            .await?
    );
    assert_eq!(guides.find(public.id).await?.context("the guide")?.likes, 0);
    assert!(
        !guides
            .set_like(private.id, "mtg", bob.id, true, now())
            .await?
    );
    assert!(
        !guides
            .set_like(public.id, "other", bob.id, true, now())
            .await?
    );
    assert!(
        !guides
            .set_like(GuideId(Uuid::now_v7()), "mtg", bob.id, true, now())
            .await?
    );
    assert!(
        guides
            .set_like(private.id, "mtg", alice.id, true, now())
            .await?
    );
    assert_eq!(
        guides.find(private.id).await?.context("the guide")?.likes,
        1
    );
    Ok(())
}
