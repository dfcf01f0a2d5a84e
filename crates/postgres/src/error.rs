//! The one place where diesel and pool errors become the domain's errors: constraint violations
//! become the business variants the ports document, a store that cannot be reached becomes an
//! error carrying [`StoreUnavailable`], and anything else stays an unexpected `anyhow::Error`.

use deckhand_domain::StoreUnavailable;
use deckhand_domain::decks::ports::{InsertDeckError, ReviseDeckError};
use deckhand_domain::error::is_store_unavailable;
use deckhand_domain::identity::ports::{
    InsertApiKeyError, InsertPartnerError, InsertPatError, InsertUserError,
};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::pooled_connection::deadpool::PoolError;

// Constraint names from `migrations/`.
const USERS_USERNAME_KEY: &str = "users_username_key";
const PATS_USER_ID_FKEY: &str = "personal_access_tokens_user_id_fkey";
const DECKS_PROVENANCE_KEY: &str = "decks_provenance_key";
const PARTNERS_PKEY: &str = "partners_pkey";
const PARTNERS_CREATED_BY_FKEY: &str = "partners_created_by_fkey";
const API_KEYS_PARTNER_FKEY: &str = "partner_api_keys_partner_slug_fkey";

/// `cause` as an error whose chain holds `StoreUnavailable`. The cause is kept as text: a context
/// type is invisible to `anyhow::Error::chain`, which is how the domain looks for the marker.
pub(crate) fn unavailable(cause: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(StoreUnavailable).context(cause.to_string())
}

/// An error that every request waiting on one shared load receives (the cache hands it out
/// behind an `Arc`): its message, still marked unavailable when the store was.
pub(crate) fn shared(error: &anyhow::Error) -> anyhow::Error {
    if is_store_unavailable(error) {
        unavailable(format!("{error:#}"))
    } else {
        anyhow::anyhow!("{error:#}")
    }
}

/// A failed checkout. Timeouts, refused or failed connections and a closed pool all mean the
/// store cannot be reached. (Creating a connection is the only source of `Backend` errors:
/// deadpool discards a connection that fails its recycling check and tries another.)
pub(crate) fn pool(error: PoolError) -> anyhow::Error {
    match error {
        PoolError::Timeout(_) | PoolError::Backend(_) | PoolError::Closed => unavailable(error),
        PoolError::NoRuntimeSpecified | PoolError::PostCreateHook(_) => {
            anyhow::Error::new(error).context("checking out a PostgreSQL connection")
        }
    }
}

/// A failed statement: unavailable when the connection was lost under it or the server
/// cancelled it (a statement timeout), unexpected otherwise.
pub(crate) fn query(error: DieselError) -> anyhow::Error {
    match error {
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => {
            crate::ended_sessions::seen();
            unavailable(error)
        }
        error if session_ended(&error) => {
            // Its connection must not be handed out again (`ended_sessions::seen`).
            crate::ended_sessions::seen();
            unavailable(error)
        }
        error if cancelled(&error) => unavailable(error),
        error => anyhow::Error::new(error),
    }
}

/// The server ended the session under a running statement: a fast shutdown or restart, an
/// administrator's `pg_terminate_backend` (SQLSTATE 57P01), the crash of another backend
/// (57P02), an idle-session timeout (57P05); severity FATAL. The transaction was rolled back
/// and the connection is gone; the pool drops it at its next checkout rather than hand it out
/// (`ended_sessions::seen`) and makes a new one, so a retry succeeds. diesel-async passes such
/// an error on as an unknown database error without its SQLSTATE, so the server's message is
/// all there is to go by: every message of a session the server ends starts with these words
/// (in the default, English, `lc_messages`; under another language such an error stays a 500).
fn session_ended(error: &DieselError) -> bool {
    server_message_starts(error, "terminating connection ")
}

/// The server cancelled the statement (SQLSTATE 57014, `query_canceled`): `statement_timeout`
/// or `lock_timeout` ran out, or an administrator's `pg_cancel_backend`. The session lives on
/// and the transaction is rolled back, so a retry can succeed: an outage of the store as the
/// caller sees it (an overloaded or locked database), not a defect of the request. Told, as
/// [`session_ended`], by the server's message.
fn cancelled(error: &DieselError) -> bool {
    server_message_starts(error, "canceling statement due to ")
}

/// Whether `error` is an error the server reported, whose message starts with `words`.
/// PostgreSQL broke a deadlock by cancelling this transaction (SQLSTATE 40P01): it was rolled
/// back whole, and trying it again is what the server asks of its client. diesel-async passes it
/// on as an unknown database error, so its message is what there is to go by.
pub(crate) fn deadlocked(error: &DieselError) -> bool {
    server_message_starts(error, "deadlock detected")
}

fn server_message_starts(error: &DieselError, words: &str) -> bool {
    matches!(
        error,
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().starts_with(words)
    )
}

pub(crate) fn insert_user(error: DieselError) -> InsertUserError {
    if violates(
        &error,
        DatabaseErrorKind::UniqueViolation,
        USERS_USERNAME_KEY,
    ) {
        InsertUserError::UsernameTaken
    } else {
        InsertUserError::Unexpected(query(error).context("inserting a user"))
    }
}

pub(crate) fn insert_pat(error: DieselError) -> InsertPatError {
    if violates(
        &error,
        DatabaseErrorKind::ForeignKeyViolation,
        PATS_USER_ID_FKEY,
    ) {
        InsertPatError::UnknownUser
    } else {
        InsertPatError::Unexpected(query(error).context("inserting a personal access token"))
    }
}

pub(crate) fn insert_partner(error: DieselError) -> InsertPartnerError {
    if violates(&error, DatabaseErrorKind::UniqueViolation, PARTNERS_PKEY) {
        InsertPartnerError::SlugTaken
    } else if violates(
        &error,
        DatabaseErrorKind::ForeignKeyViolation,
        PARTNERS_CREATED_BY_FKEY,
    ) {
        InsertPartnerError::UnknownUser
    } else {
        InsertPartnerError::Unexpected(query(error).context("inserting a partner"))
    }
}

pub(crate) fn insert_api_key(error: DieselError) -> InsertApiKeyError {
    if violates(
        &error,
        DatabaseErrorKind::ForeignKeyViolation,
        API_KEYS_PARTNER_FKEY,
    ) {
        InsertApiKeyError::UnknownPartner
    } else {
        InsertApiKeyError::Unexpected(query(error).context("inserting an API key"))
    }
}

pub(crate) fn insert_deck(error: DieselError) -> InsertDeckError {
    if violates(
        &error,
        DatabaseErrorKind::UniqueViolation,
        DECKS_PROVENANCE_KEY,
    ) {
        InsertDeckError::DuplicateProvenance
    } else {
        InsertDeckError::Unexpected(query(error).context("inserting a deck"))
    }
}

pub(crate) fn revise_deck(error: DieselError) -> ReviseDeckError {
    if violates(
        &error,
        DatabaseErrorKind::UniqueViolation,
        DECKS_PROVENANCE_KEY,
    ) {
        ReviseDeckError::DuplicateProvenance
    } else {
        ReviseDeckError::Unexpected(query(error).context("saving a deck"))
    }
}

/// By name, so that a violation of another constraint of the same kind (a duplicate primary
/// key, say) stays unexpected instead of being reported as a business outcome.
fn violates(error: &DieselError, kind: DatabaseErrorKind, constraint: &str) -> bool {
    matches!(
        error,
        DieselError::DatabaseError(actual, info)
            if *actual == kind && info.constraint_name() == Some(constraint)
    )
}

#[cfg(test)]
mod tests {
    use diesel::result::DatabaseErrorInformation;

    use super::*;

    struct Violation(&'static str);

    impl DatabaseErrorInformation for Violation {
        fn message(&self) -> &str {
            "violation"
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            Some(self.0)
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    fn db_error(kind: DatabaseErrorKind, constraint: &'static str) -> DieselError {
        DieselError::DatabaseError(kind, Box::new(Violation(constraint)))
    }

    /// Every request that waited on a failed shared load answers as the loading one would:
    /// 503 when the store was unavailable, 500 otherwise, with the same message.
    #[test]
    fn a_shared_error_keeps_its_message_and_unavailability() {
        let lost = query(DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection,
            Box::new(Violation("none")),
        ))
        .context("counting decks");
        let shared_lost = shared(&lost);
        assert!(is_store_unavailable(&shared_lost));
        assert!(format!("{shared_lost:#}").contains("counting decks"));

        let broken =
            anyhow::Error::new(db_error(DatabaseErrorKind::Unknown, "x")).context("counting decks");
        let shared_broken = shared(&broken);
        assert!(!is_store_unavailable(&shared_broken));
        assert_eq!(format!("{shared_broken:#}"), format!("{broken:#}"));
    }

    #[test]
    fn a_taken_username_is_a_business_outcome_but_a_duplicate_id_is_not() {
        let taken = db_error(DatabaseErrorKind::UniqueViolation, USERS_USERNAME_KEY);
        assert!(matches!(insert_user(taken), InsertUserError::UsernameTaken));

        let duplicate_id = db_error(DatabaseErrorKind::UniqueViolation, "users_pkey");
        let InsertUserError::Unexpected(error) = insert_user(duplicate_id) else {
            panic!("a duplicate id is not a taken username");
        };
        assert!(!is_store_unavailable(&error));
    }

    #[test]
    fn only_the_owner_foreign_key_means_an_unknown_user() {
        let unknown = db_error(DatabaseErrorKind::ForeignKeyViolation, PATS_USER_ID_FKEY);
        assert!(matches!(insert_pat(unknown), InsertPatError::UnknownUser));

        let other = db_error(DatabaseErrorKind::UniqueViolation, PATS_USER_ID_FKEY);
        assert!(matches!(insert_pat(other), InsertPatError::Unexpected(_)));
    }

    #[test]
    fn lost_connections_and_pool_failures_carry_store_unavailable() {
        let lost = DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection,
            Box::new("connection closed".to_owned()),
        );
        assert!(is_store_unavailable(&query(lost)));
        assert!(is_store_unavailable(&pool(PoolError::Timeout(
            deadpool::managed::TimeoutType::Wait
        ))));
        assert!(is_store_unavailable(&pool(PoolError::Closed)));
        assert!(!is_store_unavailable(&query(DieselError::NotFound)));
    }

    #[test]
    fn a_session_ended_or_a_statement_cancelled_is_unavailable_but_other_unknown_errors_are_not() {
        let unknown = |message: &str| {
            DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()))
        };
        for message in [
            "terminating connection due to administrator command",
            "terminating connection because of crash of another server process",
            "canceling statement due to statement timeout",
            "canceling statement due to lock timeout",
            "canceling statement due to user request",
        ] {
            assert!(is_store_unavailable(&query(unknown(message))), "{message}");
        }
        assert!(!is_store_unavailable(&query(unknown(
            "invalid input syntax for type uuid: \"terminating connection \""
        ))));
    }

    #[test]
    fn only_a_deadlock_the_server_broke_is_tried_again() {
        let unknown = |message: &str| {
            DieselError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()))
        };
        assert!(deadlocked(&unknown("deadlock detected")));
        assert!(!deadlocked(&unknown(
            "canceling statement due to lock timeout"
        )));
        assert!(!deadlocked(&DieselError::NotFound));
    }

    #[test]
    fn unavailability_survives_more_context_and_keeps_its_cause() {
        let error = pool(PoolError::Closed).context("finding a user by id");
        assert!(is_store_unavailable(&error));
        let rendered = format!("{error:#}");
        assert!(rendered.contains("closed"), "{rendered}");
    }
}
