//! OAuth: clients, codes redeemed once, refresh tokens rotated once, grants and tokens revoked,
//! sessions, DPoP proof ids recorded once, and the sign-in failure counts.

use anyhow::Context as _;
use deckhand_auth::TokenHash;
use deckhand_domain::oauth::ports::{CodeRedemption, GrantContext, InsertClientError};
use deckhand_domain::oauth::{
    ClientId, FailureCount, Grant, GrantId, GrantType, OAuthClient, Session, ThrottleKey,
};
use deckhand_domain::ports::Repositories;
use time::macros::datetime;
use uuid::Uuid;

use crate::fixtures::{now, partner_for, user};

use super::support::{
    Outcome, code_for, grant_for, oauth_client_for, oauth_setup, refresh_of, start_grant,
    started_grant, tokens_for,
};

pub async fn oauth_clients_round_trip_with_their_partner(repos: &Repositories) -> Outcome {
    let (_, acme, confidential) = oauth_setup(repos).await?;
    let public = OAuthClient {
        grant_types: [GrantType::AuthorizationCode].into_iter().collect(),
        created_at: datetime!(2024-02-29 23:59:59.999_999 UTC),
        ..oauth_client_for(&acme, true)
    };
    repos.oauth.insert_client(&public).await?;
    for client in [confidential, public] {
        assert_eq!(
            repos.oauth.find_client(client.id).await?,
            Some((client, acme.clone()))
        );
    }
    assert_eq!(
        repos.oauth.find_client(ClientId(Uuid::now_v7())).await?,
        None
    );
    Ok(())
}

pub async fn an_oauth_client_of_an_unknown_partner_is_refused(repos: &Repositories) -> Outcome {
    let client = oauth_client_for(&partner_for(&user("ghost"), "ghost"), false);
    let result = repos.oauth.insert_client(&client).await;
    assert!(
        matches!(result, Err(InsertClientError::UnknownPartner)),
        "expected UnknownPartner, got {result:?}"
    );
    assert_eq!(repos.oauth.find_client(client.id).await?, None);
    Ok(())
}

pub async fn a_code_is_redeemed_once_with_its_grant_and_tokens(repos: &Repositories) -> Outcome {
    let (alice, acme, client) = oauth_setup(repos).await?;
    let code = code_for(&client, &alice);
    repos.oauth.insert_code(&code).await?;
    assert_eq!(
        repos.oauth.find_code(&code.code_hash).await?,
        Some(code.clone())
    );

    let grant = grant_for(&client, &alice);
    let tokens = tokens_for(&grant);
    let at = now();
    assert_eq!(
        repos
            .oauth
            .redeem_code(&code.code_hash, at, &grant, &tokens)
            .await?,
        CodeRedemption::Redeemed
    );
    let redeemed = repos
        .oauth
        .find_code(&code.code_hash)
        .await?
        .context("the code")?;
    assert_eq!(redeemed.redeemed_at, Some(at));
    assert_eq!(redeemed.grant_id, Some(grant.id));
    let (access, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(access, tokens.access);
    assert_eq!(
        context,
        GrantContext {
            grant: grant.clone(),
            client: client.clone(),
            partner: acme,
            user: alice.clone(),
        }
    );
    let refresh = refresh_of(&tokens)?;
    let (stored_refresh, refresh_context) = repos
        .oauth
        .find_refresh_token(&refresh.token_hash)
        .await?
        .context("the refresh token")?;
    assert_eq!(&stored_refresh, refresh);
    assert_eq!(refresh_context.grant, grant);

    // A second redemption stores nothing and names the first one's grant.
    let second = grant_for(&client, &alice);
    let second_tokens = tokens_for(&second);
    assert_eq!(
        repos
            .oauth
            .redeem_code(&code.code_hash, now(), &second, &second_tokens)
            .await?,
        CodeRedemption::AlreadyRedeemed {
            grant_id: Some(grant.id)
        }
    );
    assert_eq!(
        repos
            .oauth
            .find_access_token(&second_tokens.access.token_hash)
            .await?,
        None
    );
    assert_eq!(
        repos
            .oauth
            .redeem_code(
                &TokenHash::of("dh_ac_never_issued"),
                now(),
                &second,
                &second_tokens
            )
            .await?,
        CodeRedemption::Missing
    );
    Ok(())
}

pub async fn concurrent_redemptions_of_one_code_let_exactly_one_win(
    repos: &Repositories,
) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    for _ in 0..5 {
        let code = code_for(&client, &alice);
        repos.oauth.insert_code(&code).await?;
        let (first, second) = (grant_for(&client, &alice), grant_for(&client, &alice));
        let (first_tokens, second_tokens) = (tokens_for(&first), tokens_for(&second));
        let at = now();
        let (a, b) = tokio::join!(
            repos
                .oauth
                .redeem_code(&code.code_hash, at, &first, &first_tokens),
            repos
                .oauth
                .redeem_code(&code.code_hash, at, &second, &second_tokens),
        );
        let outcomes = [a?, b?];
        let winners = outcomes
            .iter()
            .filter(|outcome| **outcome == CodeRedemption::Redeemed)
            .count();
        assert_eq!(winners, 1, "{outcomes:?}");
    }
    Ok(())
}

pub async fn a_refresh_token_rotates_once_and_only_while_live(repos: &Repositories) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let first = refresh_of(&tokens)?.clone();
    let next = tokens_for(&grant);
    let at = now();
    assert!(
        repos
            .oauth
            .rotate_refresh_token(&first.token_hash, at, &next)
            .await?
    );
    let (rotated, _) = repos
        .oauth
        .find_refresh_token(&first.token_hash)
        .await?
        .context("the rotated token")?;
    assert_eq!(rotated.rotated_at, Some(at));
    let successor = refresh_of(&next)?;
    assert!(
        repos
            .oauth
            .find_refresh_token(&successor.token_hash)
            .await?
            .is_some()
    );
    assert!(
        repos
            .oauth
            .find_access_token(&next.access.token_hash)
            .await?
            .is_some()
    );

    // Rotated already: refused, and nothing stored.
    let again = tokens_for(&grant);
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&first.token_hash, now(), &again)
            .await?
    );
    assert_eq!(
        repos
            .oauth
            .find_access_token(&again.access.token_hash)
            .await?,
        None
    );
    // Expired at `now`: refused.
    let later = successor.expires_at;
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&successor.token_hash, later, &again)
            .await?
    );
    // Unknown: refused.
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&TokenHash::of("dh_rt_never_issued"), now(), &again)
            .await?
    );
    // Revoked grant: refused.
    repos.oauth.revoke_grant(grant.id, now()).await?;
    assert!(
        !repos
            .oauth
            .rotate_refresh_token(&successor.token_hash, now(), &again)
            .await?
    );
    assert_eq!(
        repos
            .oauth
            .find_access_token(&again.access.token_hash)
            .await?,
        None
    );
    Ok(())
}

pub async fn concurrent_rotations_of_one_refresh_token_let_exactly_one_win(
    repos: &Repositories,
) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let mut current = refresh_of(&tokens)?.clone();
    for _ in 0..10 {
        let (a, b) = (tokens_for(&grant), tokens_for(&grant));
        let at = now();
        let (first, second) = tokio::join!(
            repos
                .oauth
                .rotate_refresh_token(&current.token_hash, at, &a),
            repos
                .oauth
                .rotate_refresh_token(&current.token_hash, at, &b),
        );
        let (first, second) = (first?, second?);
        assert!(
            first != second,
            "exactly one rotation wins: {first} {second}"
        );
        let (winner, loser) = if first { (a, b) } else { (b, a) };
        assert_eq!(
            repos
                .oauth
                .find_access_token(&loser.access.token_hash)
                .await?,
            None
        );
        current = refresh_of(&winner)?.clone();
    }
    Ok(())
}

pub async fn revoking_a_grant_reaches_every_token_and_keeps_the_first_time(
    repos: &Repositories,
) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let (other, other_tokens) = started_grant(repos, &client, &alice).await?;
    let first = now();
    repos.oauth.revoke_grant(grant.id, first).await?;
    repos
        .oauth
        .revoke_grant(grant.id, first + time::Duration::minutes(1))
        .await?;
    let (_, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(context.grant.revoked_at, Some(first));
    let (_, context) = repos
        .oauth
        .find_refresh_token(&refresh_of(&tokens)?.token_hash)
        .await?
        .context("the refresh token")?;
    assert_eq!(context.grant.revoked_at, Some(first));
    let (_, untouched) = repos
        .oauth
        .find_access_token(&other_tokens.access.token_hash)
        .await?
        .context("the other grant's token")?;
    assert_eq!(untouched.grant, other);
    // A missing grant is no error.
    repos
        .oauth
        .revoke_grant(GrantId(Uuid::now_v7()), now())
        .await?;
    Ok(())
}

pub async fn revoking_an_access_token_leaves_its_grant(repos: &Repositories) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let (grant, tokens) = started_grant(repos, &client, &alice).await?;
    let at = now();
    repos
        .oauth
        .revoke_access_token(&tokens.access.token_hash, at)
        .await?;
    repos
        .oauth
        .revoke_access_token(&tokens.access.token_hash, at + time::Duration::minutes(1))
        .await?;
    let (access, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(access.revoked_at, Some(at));
    assert_eq!(context.grant, grant);
    repos
        .oauth
        .revoke_access_token(&TokenHash::of("dh_at_never_issued"), now())
        .await?;
    Ok(())
}

/// Disabling the partner or deactivating the user shows in the next lookup of any token: this
/// is what stops every token of theirs at once.
pub async fn tokens_come_back_with_the_current_state_of_user_and_partner(
    repos: &Repositories,
) -> Outcome {
    let (alice, acme, client) = oauth_setup(repos).await?;
    let (_, tokens) = started_grant(repos, &client, &alice).await?;
    repos.partners.set_active(&acme.slug, false).await?;
    repos.users.set_active(alice.id, false).await?;
    let (_, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert!(!context.partner.active && !context.user.active);
    let (_, context) = repos
        .oauth
        .find_refresh_token(&refresh_of(&tokens)?.token_hash)
        .await?
        .context("the refresh token")?;
    assert!(!context.partner.active && !context.user.active);
    let (_, partner) = repos
        .oauth
        .find_client(client.id)
        .await?
        .context("the client")?;
    assert!(!partner.active);
    Ok(())
}

pub async fn sessions_round_trip_with_their_user(repos: &Repositories) -> Outcome {
    let alice = user("alice");
    repos.users.insert(&alice).await?;
    let session = Session {
        token_hash: TokenHash::of("dh_ss_x"),
        user_id: alice.id,
        created_at: now(),
        expires_at: now() + time::Duration::hours(12),
    };
    repos.oauth.insert_session(&session).await?;
    assert_eq!(
        repos.oauth.find_session(&session.token_hash).await?,
        Some((session, alice))
    );
    assert_eq!(
        repos.oauth.find_session(&TokenHash::of("dh_ss_y")).await?,
        None
    );
    Ok(())
}

pub async fn a_bound_grant_keeps_its_key_thumbprint(repos: &Repositories) -> Outcome {
    let (alice, _, client) = oauth_setup(repos).await?;
    let bound = Grant {
        jkt: Some(JKT.into()),
        ..grant_for(&client, &alice)
    };
    let (grant, tokens) = start_grant(repos, &client, &alice, bound).await?;
    let (_, context) = repos
        .oauth
        .find_access_token(&tokens.access.token_hash)
        .await?
        .context("the access token")?;
    assert_eq!(context.grant.jkt.as_deref(), Some(JKT));
    assert_eq!(context.grant.token_type(), "DPoP");
    let (_, context) = repos
        .oauth
        .find_refresh_token(&refresh_of(&tokens)?.token_hash)
        .await?
        .context("the refresh token")?;
    assert_eq!(context.grant, grant);
    Ok(())
}

/// An RFC 7638 thumbprint (of the RFC 8037 Ed25519 example key).
const JKT: &str = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

pub async fn a_dpop_proof_id_is_recorded_once_per_key(repos: &Repositories) -> Outcome {
    let other_key = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs";
    let at = now();
    let until = at + time::Duration::minutes(5);
    let oauth = &repos.oauth;
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[1; 32], at, until)
            .await?
    );
    assert!(
        !oauth
            .record_dpop_proof_once(JKT, &[1; 32], at, until)
            .await?
    );
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[2; 32], at, until)
            .await?
    );
    assert!(
        oauth
            .record_dpop_proof_once(other_key, &[1; 32], at, until)
            .await?
    );
    let just_before = until - time::Duration::microseconds(1);
    assert!(
        !oauth
            .record_dpop_proof_once(JKT, &[1; 32], just_before, until)
            .await?
    );
    Ok(())
}

pub async fn an_expired_dpop_proof_id_is_taken_over(repos: &Repositories) -> Outcome {
    let at = now();
    let ttl = time::Duration::minutes(5);
    let oauth = &repos.oauth;
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[7; 32], at, at + ttl)
            .await?
    );
    assert!(
        oauth
            .record_dpop_proof_once(JKT, &[8; 32], at, at + ttl)
            .await?
    );
    // At expiry the records are gone (pruned or taken over), and spent again for a new window.
    let after = at + ttl;
    for hash in [[7; 32], [8; 32]] {
        assert!(
            oauth
                .record_dpop_proof_once(JKT, &hash, after, after + ttl)
                .await?
        );
        assert!(
            !oauth
                .record_dpop_proof_once(JKT, &hash, after, after + ttl)
                .await?
        );
    }
    Ok(())
}

pub async fn concurrent_records_of_one_dpop_proof_id_let_exactly_one_win(
    repos: &Repositories,
) -> Outcome {
    let at = now();
    let until = at + time::Duration::minutes(5);
    for round in 0..20_u8 {
        let hash = [round; 32];
        let (first, second) = tokio::join!(
            repos.oauth.record_dpop_proof_once(JKT, &hash, at, until),
            repos.oauth.record_dpop_proof_once(JKT, &hash, at, until),
        );
        let (first, second) = (first?, second?);
        assert!(first != second, "exactly one record wins: {first} {second}");
    }
    Ok(())
}

pub async fn failed_sign_ins_are_counted_restarted_and_forgotten_per_key(
    repos: &Repositories,
) -> Outcome {
    let at = datetime!(2026-06-01 12:00 UTC);
    let minute = time::Duration::minutes(1);
    let alice = ThrottleKey::Username("alice".into());
    let ip = ThrottleKey::Ip("2001:db8::/64".into());
    let both = [alice.clone(), ip.clone()];
    assert_eq!(repos.oauth.sign_in_failures(&both).await?, [None, None]);
    let count = |failures, last_failure_at| FailureCount {
        failures,
        last_failure_at,
    };
    let counted = repos
        .oauth
        .record_sign_in_failure(&both, at, at - 15 * minute)
        .await?;
    assert_eq!(counted, [count(1, at), count(1, at)]);
    let counted = repos
        .oauth
        .record_sign_in_failure(std::slice::from_ref(&ip), at + minute, at - 14 * minute)
        .await?;
    assert_eq!(counted, [count(2, at + minute)]);
    // A count last failed at or before the restart point starts again.
    let later = at + 20 * minute;
    let counted = repos.oauth.record_sign_in_failure(&both, later, at).await?;
    assert_eq!(counted, [count(1, later), count(3, later)]);
    repos.oauth.clear_sign_in_failures(&alice).await?;
    assert_eq!(
        repos.oauth.sign_in_failures(&both).await?,
        [None, Some(count(3, later))]
    );
    Ok(())
}
