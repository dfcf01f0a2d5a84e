-- Every change to games, their sections or formats notifies `deckhand_catalog` when it commits:
-- each instance keeps these tables in memory and listens on that channel to drop its copy
-- (crates/postgres/src/catalog/cache.rs). Statement triggers: one notification per statement,
-- and NOTIFY folds repeats within a transaction.

CREATE FUNCTION notify_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('deckhand_catalog', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER games_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON games
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();
CREATE TRIGGER game_sections_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON game_sections
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();
CREATE TRIGGER formats_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON formats
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();
