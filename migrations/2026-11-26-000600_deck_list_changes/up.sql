-- A counter per game that every committed change to a game's decks moves, in the writer's own
-- transaction. An instance remembers a list total with the counter it was counted under, and
-- every list page reads the counter beside its rows: a total counted before a change that page
-- can see is counted again, so no instance shows a total older than a write already
-- acknowledged by any instance (docs/operations.md, "Totals across instances").
CREATE TABLE deck_list_changes (
    game text PRIMARY KEY,
    changes bigint NOT NULL
);

-- Deferred to the commit, the bump is the last lock a deck write takes: writers of a game queue
-- on its row only while they commit, never while they hold other rows' locks, so it adds no
-- deadlock.
CREATE FUNCTION deck_list_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO deck_list_changes AS c (game, changes) VALUES (OLD.game, 1)
            ON CONFLICT (game) DO UPDATE SET changes = c.changes + 1;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.game IS DISTINCT FROM OLD.game) THEN
        INSERT INTO deck_list_changes AS c (game, changes) VALUES (NEW.game, 1)
            ON CONFLICT (game) DO UPDATE SET changes = c.changes + 1;
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER deck_list_changed AFTER INSERT OR UPDATE OR DELETE ON decks
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION deck_list_changed();
