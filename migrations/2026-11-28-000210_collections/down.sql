-- Collection events go with their collections.
DELETE FROM events WHERE subject_kind = 'collection';
ALTER TABLE events DROP CONSTRAINT events_subject_kind_check;
ALTER TABLE events ADD CONSTRAINT events_subject_kind_check
    CHECK (subject_kind IN ('deck', 'sideboard_guide', 'catalog'));
DROP TABLE collection_entries;
DROP TABLE collections;

CREATE OR REPLACE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    subject_visibility text;
    subject_owner uuid;
    subject_archived boolean;
    named_id uuid;
    named_visibility text;
    named_owner uuid;
    named_archived boolean;
    head text := TG_TABLE_SCHEMA || ' ' || NEW.sequence::text || ' ' || NEW.game || ' ' || NEW.type;
    payload text;
BEGIN
    IF NEW.subject_kind = 'deck' THEN
        SELECT visibility, owner_id, is_archived INTO subject_visibility, subject_owner, subject_archived
        FROM decks WHERE id = NEW.subject_id;
    ELSIF NEW.subject_kind = 'sideboard_guide' THEN
        SELECT visibility, owner_id, is_archived INTO subject_visibility, subject_owner, subject_archived
        FROM sideboard_guides WHERE id = NEW.subject_id;
    END IF;
    named_id := coalesce(NEW.data->'forked_from'->>'deck_id', NEW.data->>'deck_id')::uuid;
    IF named_id IS NOT NULL THEN
        SELECT visibility, owner_id, is_archived INTO named_visibility, named_owner, named_archived
        FROM decks WHERE id = named_id;
    END IF;
    payload := head || ' ' || json_build_object(
        'id', NEW.id,
        'occurred_at', NEW.occurred_at,
        'subject_id', NEW.subject_id,
        'actor_user_id', NEW.actor_user_id,
        'actor_partner', NEW.actor_partner,
        'data', NEW.data,
        'subject', CASE WHEN subject_visibility IS NULL THEN NULL ELSE json_build_object(
            'visibility', subject_visibility, 'owner', subject_owner, 'archived', subject_archived) END,
        'named', CASE WHEN named_visibility IS NULL THEN NULL ELSE json_build_object(
            'visibility', named_visibility, 'owner', named_owner, 'archived', named_archived) END
    )::text;
    IF octet_length(payload) > 7900 THEN
        payload := head;
    END IF;
    PERFORM pg_notify('deckhand_events', payload);
    RETURN NULL;
END;
$$;
