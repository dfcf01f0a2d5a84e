-- Every change to personal access tokens or users notifies `deckhand_credentials` when it
-- commits: each instance keeps the tokens it has found, with their users, in memory and
-- listens on that channel to drop its copy (crates/postgres/src/pats/cache.rs), so a token
-- revoked or a user deactivated by any instance or by hand stops working everywhere at once.
-- New rows change nothing kept (only tokens found are kept), so inserts do not notify.
-- Statement triggers: one notification per statement, and NOTIFY folds repeats within a
-- transaction.

CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('deckhand_credentials', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER personal_access_tokens_changed AFTER UPDATE OR DELETE OR TRUNCATE ON personal_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
CREATE TRIGGER users_changed AFTER UPDATE OR DELETE OR TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
