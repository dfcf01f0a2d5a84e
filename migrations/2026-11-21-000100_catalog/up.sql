-- The card catalog: games, their deck sections and formats (seeded here: games are data, not
-- code), and the cards and printings imported from catalog files.
--
-- Format ids are UUID v5 of "<game>/<slug>" in the namespace
-- 5d0c2a0e-3b8f-4c1e-9a57-6f1e2d8b4c10, written as literals because PostgreSQL has no v5
-- function without the uuid-ossp extension. `deckhand_domain::catalog::format_id` computes the
-- same values, and a test checks every literal below against it.

CREATE TABLE games (
    slug text PRIMARY KEY,
    name text NOT NULL,
    -- In the game's display order (W U B R G for mtg); deck colours are sorted by it.
    colors text[] NOT NULL,
    position integer NOT NULL,
    CONSTRAINT games_slug_format CHECK (slug ~ '^[a-z0-9-]{2,40}$'),
    CONSTRAINT games_colors_not_null CHECK (array_position(colors, NULL) IS NULL)
);

CREATE TABLE game_sections (
    game text NOT NULL REFERENCES games (slug) ON DELETE CASCADE,
    key text NOT NULL,
    label text NOT NULL,
    counted boolean NOT NULL,
    position integer NOT NULL,
    PRIMARY KEY (game, key)
);

CREATE TABLE formats (
    id uuid PRIMARY KEY,
    game text NOT NULL REFERENCES games (slug) ON DELETE CASCADE,
    slug text NOT NULL,
    name text NOT NULL,
    position integer NOT NULL,
    CONSTRAINT formats_game_slug_key UNIQUE (game, slug)
);

-- One row per card (mtg: an oracle id). `name_key` and `front_face_key` are the names as the
-- domain normalises them (`catalog::name_key`), so lookups are plain equality on a btree index
-- and do not depend on the database's collation.
CREATE TABLE catalog_cards (
    game text NOT NULL REFERENCES games (slug) ON DELETE CASCADE,
    card_id uuid NOT NULL,
    name text NOT NULL,
    face_names text[] NOT NULL,
    name_key text NOT NULL,
    front_face_key text NOT NULL,
    PRIMARY KEY (game, card_id),
    CONSTRAINT catalog_cards_face_names_not_null CHECK (array_position(face_names, NULL) IS NULL)
);

CREATE INDEX catalog_cards_name_key_idx ON catalog_cards (game, name_key);
CREATE INDEX catalog_cards_front_face_key_idx ON catalog_cards (game, front_face_key);

-- One row per printing (mtg: a Scryfall card object).
CREATE TABLE catalog_printings (
    game text NOT NULL,
    variant_id uuid NOT NULL,
    card_id uuid NOT NULL,
    name text NOT NULL,
    set text NOT NULL,
    collector_number text NOT NULL,
    type_line text NOT NULL,
    image_url text,
    colors text[] NOT NULL,
    catalog_a_id text,
    catalog_b_id text,
    catalog_c_id text,
    lang text NOT NULL,
    released_at date,
    -- Lower is preferred when a request does not pin a printing (domain: `Preference`).
    preference smallint NOT NULL,
    -- {"<format slug>": "legal" | "not_legal" | "restricted" | "banned"}, as the source has it.
    legalities jsonb NOT NULL,
    PRIMARY KEY (game, variant_id),
    CONSTRAINT catalog_printings_card_fkey
        FOREIGN KEY (game, card_id) REFERENCES catalog_cards (game, card_id) ON DELETE CASCADE,
    CONSTRAINT catalog_printings_colors_not_null CHECK (array_position(colors, NULL) IS NULL)
);

-- The lookups of card resolution, one per identifier kind.
CREATE INDEX catalog_printings_set_number_idx ON catalog_printings (game, set, collector_number);
CREATE INDEX catalog_printings_catalog_a_idx ON catalog_printings (game, catalog_a_id)
    WHERE catalog_a_id IS NOT NULL;
CREATE INDEX catalog_printings_catalog_b_idx ON catalog_printings (game, catalog_b_id)
    WHERE catalog_b_id IS NOT NULL;
CREATE INDEX catalog_printings_catalog_c_idx ON catalog_printings (game, catalog_c_id)
    WHERE catalog_c_id IS NOT NULL;
-- The default printing of a card (optionally within a set): the first in this order.
CREATE INDEX catalog_printings_preferred_idx
    ON catalog_printings (game, card_id, preference, released_at DESC NULLS LAST, variant_id);

INSERT INTO games (slug, name, colors, position) VALUES
    ('mtg', 'Magic: The Gathering', ARRAY['W', 'U', 'B', 'R', 'G'], 1),
    ('lorcana', 'Disney Lorcana', ARRAY['Amber', 'Amethyst', 'Emerald', 'Ruby', 'Sapphire', 'Steel'], 2);

INSERT INTO game_sections (game, key, label, counted, position) VALUES
    ('mtg', 'commander', 'Commander', true, 1),
    ('mtg', 'companion', 'Companion', true, 2),
    ('mtg', 'mainboard', 'Deck', true, 3),
    ('mtg', 'sideboard', 'Sideboard', true, 4),
    ('mtg', 'maybeboard', 'Maybeboard', false, 5),
    ('lorcana', 'mainboard', 'Deck', true, 1),
    ('lorcana', 'maybeboard', 'Maybeboard', false, 2);

INSERT INTO formats (id, game, slug, name, position) VALUES
    ('73a4c093-7d6f-51f9-850b-647254ef1a6a', 'mtg', 'standard', 'Standard', 1),
    ('95db76fd-2841-5ba8-97ee-92253a7589c3', 'mtg', 'pioneer', 'Pioneer', 2),
    ('59b2f751-ebfb-5171-bef0-554ccfd0df1b', 'mtg', 'modern', 'Modern', 3),
    ('af139c21-c09b-523a-8a78-ffcea2f48eda', 'mtg', 'legacy', 'Legacy', 4),
    ('3aaf8a39-3aa1-584a-9014-0213ee98ff39', 'mtg', 'vintage', 'Vintage', 5),
    ('6ff6f8f9-a0cd-536a-a4a1-94fe3ee59f9a', 'mtg', 'pauper', 'Pauper', 6),
    ('5901af00-a0f7-5199-86cf-5e2d29f800d4', 'mtg', 'commander', 'Commander', 7),
    ('db4fb6ec-0b19-5445-9203-d059227901d9', 'lorcana', 'core', 'Core Constructed', 1),
    ('ee511bbd-7f70-5bf4-9cba-ae3bc17701b8', 'lorcana', 'infinity', 'Infinity Constructed', 2);
