-- The guide list's counterpart of deck_list_changes (2026-11-26-000600): a counter per game
-- that every committed change to what a guide list can filter on moves, in the writer's own
-- transaction, so a remembered guide total is checked the way a deck total is
-- (docs/operations.md, "Totals across instances").
CREATE TABLE guide_list_changes (
    game text PRIMARY KEY,
    changes bigint NOT NULL
);

-- Deferred to the commit, as the decks' bump is, so it is the last lock a write takes. The
-- function is deck_list_changed() over its own table: static SQL in each keeps the bump a
-- statement planned once per session, where one function taking the table would EXECUTE it.
CREATE FUNCTION guide_list_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO guide_list_changes AS c (game, changes) VALUES (OLD.game, 1)
            ON CONFLICT (game) DO UPDATE SET changes = c.changes + 1;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.game IS DISTINCT FROM OLD.game) THEN
        INSERT INTO guide_list_changes AS c (game, changes) VALUES (NEW.game, 1)
            ON CONFLICT (game) DO UPDATE SET changes = c.changes + 1;
    END IF;
    RETURN NULL;
END;
$$;

-- A list filters guides on their own columns, on the decks attached to them and on their
-- matchups' opponent archetypes. Every write of an attachment or a matchup marks its guide
-- edited in the same transaction (`SideboardGuideRepository`), so the guide row's trigger
-- covers those too. Likes and pageviews move counters on the guide row that no filter reads:
-- they bump nothing.
CREATE CONSTRAINT TRIGGER guide_list_changed
    AFTER INSERT OR DELETE OR UPDATE OF game, owner_id, visibility, is_archived, name, format,
        youtube_url, created_at, updated_at
    ON sideboard_guides
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION guide_list_changed();

INSERT INTO guide_list_changes (game, changes) SELECT DISTINCT game, 1 FROM sideboard_guides;
