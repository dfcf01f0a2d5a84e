-- (Numbered 000210: 000200 is also the version of 2026-11-28-000200_commander_partners, and
-- diesel keys migrations by that number.)
-- Collections (contract "Collections"): what a user owns of a game, one row per printing and
-- finish. The `collections` row is the collection itself: its version, and the lock every write
-- takes first (an upsert that bumps the version), so concurrent writes of one collection run
-- one after another and lose no delta. Entries copy what they show of the printing, so that
-- reading a collection needs no catalog lookups.
CREATE TABLE collections (
    owner_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    game text NOT NULL REFERENCES games (slug),
    version bigint NOT NULL CHECK (version > 0),
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (owner_id, game)
);

CREATE TABLE collection_entries (
    owner_id uuid NOT NULL,
    game text NOT NULL,
    variant_id uuid NOT NULL,
    foil boolean NOT NULL,
    card_id uuid NOT NULL,
    name text NOT NULL,
    -- `catalog::name_key` of the name, computed by the domain: the order and the `q` filter.
    name_key text NOT NULL,
    set_code text NOT NULL,
    collector_number text NOT NULL,
    quantity integer NOT NULL CHECK (quantity > 0),
    trade_quantity integer NOT NULL CHECK (trade_quantity >= 0 AND trade_quantity <= quantity),
    condition text,
    language text,
    PRIMARY KEY (owner_id, game, variant_id, foil),
    FOREIGN KEY (owner_id, game) REFERENCES collections (owner_id, game) ON DELETE CASCADE
);

-- The listing and the export walk this index in their order (name, set, number, finish, id).
CREATE INDEX collection_entries_listed
    ON collection_entries (owner_id, game, name_key, set_code, collector_number, foil, variant_id);
-- A deck's needs sum the copies of its cards, any printing and finish, from the index alone.
CREATE INDEX collection_entries_by_card
    ON collection_entries (owner_id, game, card_id) INCLUDE (quantity);

ALTER TABLE events DROP CONSTRAINT events_subject_kind_check;
ALTER TABLE events ADD CONSTRAINT events_subject_kind_check
    CHECK (subject_kind IN ('deck', 'sideboard_guide', 'catalog', 'collection'));

-- `collection.updated` events are announced with their subject's read state, as others are.
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
    ELSIF NEW.subject_kind = 'collection' THEN
        -- A collection is private to its owner, whose id is the subject's.
        subject_visibility := 'private';
        subject_owner := NEW.subject_id;
        subject_archived := false;
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
