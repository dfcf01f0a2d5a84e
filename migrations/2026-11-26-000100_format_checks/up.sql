-- Format checks (contract, "Format checks"): deck rules per format, the deck-building facts of
-- each card, and each card's legality history per format. All of it is data: a second game's
-- formats get rules by inserting rows here, and its cards get facts from its catalog files.

-- One row per format that has deck rules; a format without a row has none (a check of it is
-- a 400). `commander_*` are all NULL or all set.
CREATE TABLE format_rules (
    format_id uuid PRIMARY KEY REFERENCES formats (id) ON DELETE CASCADE,
    main_min integer NOT NULL CHECK (main_min >= 0),
    main_max integer CHECK (main_max >= main_min),
    sideboard_max integer CHECK (sideboard_max >= 0),
    copy_limit integer NOT NULL CHECK (copy_limit >= 1),
    singleton boolean NOT NULL,
    commander_count_max integer CHECK (commander_count_max >= 1),
    commander_deck_size integer CHECK (commander_deck_size >= 1),
    commander_color_identity boolean,
    CONSTRAINT format_rules_commander_all_or_none CHECK (
        (commander_count_max IS NULL) = (commander_deck_size IS NULL)
        AND (commander_count_max IS NULL) = (commander_color_identity IS NULL)
    )
);

-- The values `deckhand_domain::formats::seeds::mtg_rules` states; the contract suite holds
-- both stores to them.
INSERT INTO format_rules (format_id, main_min, main_max, sideboard_max, copy_limit, singleton,
                          commander_count_max, commander_deck_size, commander_color_identity)
SELECT id, 60, NULL, 15, 4, false, NULL, NULL, NULL FROM formats
WHERE game = 'mtg' AND slug IN ('standard', 'pioneer', 'modern', 'legacy', 'vintage', 'pauper');
INSERT INTO format_rules (format_id, main_min, main_max, sideboard_max, copy_limit, singleton,
                          commander_count_max, commander_deck_size, commander_color_identity)
SELECT id, 0, NULL, NULL, 1, true, 2, 100, true FROM formats
WHERE game = 'mtg' AND slug = 'commander';

CREATE TRIGGER format_rules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON format_rules
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();

-- A card's type line and colour identity, from its last imported printing. Rows imported
-- before this migration take the type line of their preferred printing and their colours as
-- identity (files before this did not keep it) until the next import.
ALTER TABLE catalog_cards
    ADD COLUMN type_line text NOT NULL DEFAULT '',
    ADD COLUMN color_identity text[] NOT NULL DEFAULT '{}';

UPDATE catalog_cards c SET type_line = p.type_line, color_identity = p.colors
FROM (
    SELECT DISTINCT ON (game, card_id) game, card_id, type_line, colors
    FROM catalog_printings
    ORDER BY game, card_id, preference, released_at DESC NULLS LAST, variant_id
) p
WHERE p.game = c.game AND p.card_id = c.card_id;

-- What a card's rules text says about deck building, by name (matched on `name_key` like
-- names are), so that rows seeded here apply to cards imported later. Imports of files with
-- `oracle_text` replace them. `copies_max` NULL with `any_number` false: the format's limit.
CREATE TABLE card_text_rules (
    game text NOT NULL REFERENCES games (slug) ON DELETE CASCADE,
    name_key text NOT NULL,
    any_number boolean NOT NULL DEFAULT false,
    copies_max integer CHECK (copies_max >= 1),
    can_be_commander boolean NOT NULL DEFAULT false,
    PRIMARY KEY (game, name_key),
    CONSTRAINT card_text_rules_one_allowance CHECK (NOT (any_number AND copies_max IS NOT NULL))
);

-- `deckhand_domain::formats::seeds::mtg_text_rules`; the bundled 2019 file has no oracle text.
INSERT INTO card_text_rules (game, name_key, any_number, copies_max, can_be_commander) VALUES
    ('mtg', 'relentless rats', true, NULL, false),
    ('mtg', 'rat colony', true, NULL, false),
    ('mtg', 'persistent petitioners', true, NULL, false),
    ('mtg', 'shadowborn apostle', true, NULL, false),
    ('mtg', 'dragon''s approach', true, NULL, false),
    ('mtg', 'slime against humanity', true, NULL, false),
    ('mtg', 'seven dwarves', false, 7, false),
    ('mtg', 'nazgûl', false, 9, false),
    ('mtg', 'daretti, scrap savant', false, NULL, true),
    ('mtg', 'freyalise, llanowar''s fury', false, NULL, true),
    ('mtg', 'nahiri, the lithomancer', false, NULL, true),
    ('mtg', 'ob nixilis of the black oath', false, NULL, true),
    ('mtg', 'teferi, temporal archmage', false, NULL, true);

CREATE TRIGGER card_text_rules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON card_text_rules
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();

-- Each card's legality per format over time: `status` from `valid_from` on, until the next
-- row. Imports add a row when a card's legality differs from its last row (at the import's
-- start time, `source` 'import'); `deckhand admin format legality` adds operator rows.
CREATE TABLE card_legalities (
    game text NOT NULL,
    card_id uuid NOT NULL,
    format text NOT NULL,
    valid_from timestamptz NOT NULL,
    status text NOT NULL CHECK (status IN ('legal', 'not_legal', 'restricted', 'banned')),
    source text NOT NULL CHECK (source IN ('import', 'operator')),
    PRIMARY KEY (game, card_id, format, valid_from),
    CONSTRAINT card_legalities_card_fkey
        FOREIGN KEY (game, card_id) REFERENCES catalog_cards (game, card_id) ON DELETE CASCADE,
    CONSTRAINT card_legalities_format_fkey
        FOREIGN KEY (game, format) REFERENCES formats (game, slug) ON DELETE CASCADE
);

-- The history starts with what the catalog holds now, recorded as of this migration.
INSERT INTO card_legalities (game, card_id, format, valid_from, status, source)
SELECT DISTINCT ON (p.game, p.card_id, f.slug)
    p.game, p.card_id, f.slug, now(), p.legalities ->> f.slug, 'import'
FROM catalog_printings p
JOIN formats f ON f.game = p.game
WHERE p.legalities ->> f.slug IN ('legal', 'not_legal', 'restricted', 'banned')
ORDER BY p.game, p.card_id, f.slug, p.preference, p.released_at DESC NULLS LAST, p.variant_id;

CREATE TRIGGER card_legalities_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON card_legalities
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalog_changed();
