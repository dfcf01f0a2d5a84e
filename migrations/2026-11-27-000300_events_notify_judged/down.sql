CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('deckhand_events', NEW.sequence::text || ' ' || NEW.game || ' ' || NEW.type);
    RETURN NULL;
END;
$$;
