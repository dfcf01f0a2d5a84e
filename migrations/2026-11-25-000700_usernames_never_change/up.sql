-- A username never changes: no endpoint or admin command renames a user, and deck lists name
-- their authors from a copy kept in process (`postgres::usernames`) that never looks again.
-- This makes the rule the database's, so nothing can break that copy unnoticed.
CREATE FUNCTION refuse_username_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the username of user % never changes', OLD.id
        USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER users_username_never_changes BEFORE UPDATE OF username ON users
    FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username)
    EXECUTE FUNCTION refuse_username_change();
