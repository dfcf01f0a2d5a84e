-- A committed event is announced with its game and type as well as its sequence
-- ("<sequence> <game> <type>"), so that a held feed request reads nothing for news of another
-- game or of types it did not ask for (docs/events.md, "Fair share").
CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('deckhand_events', NEW.sequence::text || ' ' || NEW.game || ' ' || NEW.type);
    RETURN NULL;
END;
$$;
