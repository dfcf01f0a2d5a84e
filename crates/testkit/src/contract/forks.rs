//! Forks: a fork names its source as it is now and is listed by it; concurrent forks all count.

use anyhow::Context as _;
use deckhand_domain::decks::ports::NewDeck;
use deckhand_domain::decks::{
    Deck, DeckId, ForkOrigin, ForkedFrom, HistoryType, SourceAccess, Visibility,
};
use deckhand_domain::identity::User;
use deckhand_domain::ports::Repositories;

use crate::fixtures::{deck, now, revision_of, update_to, user};

use super::support::{Outcome, list_query, names};

/// A fork of `source` at `version` by `owner`, named `name`.
fn fork_of(owner: &User, source: DeckId, version: i32, name: &str) -> NewDeck {
    let mut new = deck(owner, name);
    new.forked_from = Some(ForkedFrom {
        deck_id: source,
        version,
    });
    new
}

pub async fn forks_name_their_source_as_it_is_now_and_are_listed_by_it(
    repos: &Repositories,
) -> Outcome {
    let (alice, bob) = (user("alice"), user("bob"));
    repos.users.insert(&alice).await?;
    repos.users.insert(&bob).await?;
    let source = deck(&alice, "Original");
    repos.decks.insert(&source).await?;
    repos.decks.insert(&deck(&bob, "Unrelated")).await?;
    let first = fork_of(&bob, source.id, 1, "Fork one");
    let inserted = repos.decks.insert(&first).await?;
    let origin = |visibility| ForkOrigin {
        source: ForkedFrom {
            deck_id: source.id,
            version: 1,
        },
        access: Some(SourceAccess {
            visibility,
            owner: alice.id,
            is_archived: false,
        }),
    };
    assert_eq!(inserted.facts.fork, Some(origin(Visibility::Public)));
    assert_eq!(inserted.facts.forks, 0);
    repos
        .decks
        .revise(source.id, update_to("Original v2", now()))
        .await?;
    let mut second = fork_of(&alice, source.id, 2, "Fork two");
    second.created_at += time::Duration::milliseconds(1);
    repos.decks.insert(&second).await?;

    let found = repos.decks.find(source.id).await?.context("the source")?;
    assert_eq!((found.facts.forks, found.facts.fork), (2, None));
    let overview = repos
        .decks
        .find_overview(source.id)
        .await?
        .context("the source's overview")?;
    assert_eq!(overview.listing.facts.forks, 2);
    // A fork saved keeps its source.
    let saved = repos
        .decks
        .revise(first.id, update_to("Fork one v2", now()))
        .await?;
    assert_eq!(saved.facts.fork, Some(origin(Visibility::Public)));

    let mut query = list_query(Some(bob.id));
    query.filters.forked_from = Some(source.id);
    let forks = repos.decks.list(&query).await?;
    assert_eq!(names(&forks), ["Fork one v2", "Fork two"]);
    assert_eq!(forks.total, 2);
    assert_eq!(
        forks.items[1].facts.fork.map(|fork| fork.source.version),
        Some(2)
    );
    let all = repos.decks.list(&list_query(None)).await?;
    let listed = |name: &str| all.items.iter().find(|deck| deck.name == name).cloned();
    assert_eq!(
        listed("Original v2")
            .context("the source listed")?
            .facts
            .forks,
        2
    );
    assert_eq!(
        listed("Fork one v2").context("a fork listed")?.facts.fork,
        Some(origin(Visibility::Public))
    );

    // The source turned private: its forks read what the read rule needs to hide it.
    repos
        .decks
        .revise(
            source.id,
            Box::new(|deck: &Deck| {
                let mut content = deck.content.clone();
                content.visibility = Visibility::Private;
                Ok(revision_of(deck, content, HistoryType::Update, now()))
            }),
        )
        .await?;
    let fork = repos.decks.find(first.id).await?.context("the fork")?;
    assert_eq!(fork.facts.fork, Some(origin(Visibility::Private)));
    assert_eq!(fork.forked_from(Some(bob.id)), None);
    assert_eq!(
        fork.forked_from(Some(alice.id))
            .map(|source| source.deck_id),
        Some(source.id)
    );
    let overview = repos
        .decks
        .find_overview(first.id)
        .await?
        .context("the fork's overview")?;
    assert_eq!(
        overview.listing.facts.fork,
        Some(origin(Visibility::Private))
    );
    Ok(())
}

pub async fn concurrent_forks_of_one_deck_all_count(repos: &Repositories) -> Outcome {
    let owner = user("owner");
    repos.users.insert(&owner).await?;
    let source = deck(&owner, "Popular");
    repos.decks.insert(&source).await?;
    let tasks: Vec<_> = (0..20)
        .map(|index| {
            let (decks, new) = (
                repos.decks.clone(),
                fork_of(&owner, source.id, 1, &format!("Fork {index}")),
            );
            tokio::spawn(async move { decks.insert(&new).await.map(drop) })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    let found = repos.decks.find(source.id).await?.context("the source")?;
    assert_eq!(found.facts.forks, 20);
    Ok(())
}
