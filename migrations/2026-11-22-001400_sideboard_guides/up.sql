-- Sideboard guides, the decks attached to them, and their matchups.

CREATE TABLE sideboard_guides (
    id uuid PRIMARY KEY,
    game text NOT NULL CONSTRAINT sideboard_guides_game_fkey REFERENCES games (slug),
    owner_id uuid NOT NULL CONSTRAINT sideboard_guides_owner_id_fkey REFERENCES users (id),
    -- Also attached in sideboard_guide_decks (is_primary); kept here for the summary join.
    primary_deck_id uuid NOT NULL CONSTRAINT sideboard_guides_primary_deck_id_fkey REFERENCES decks (id),
    name text NOT NULL CONSTRAINT sideboard_guides_name_length CHECK (char_length(name) BETWEEN 1 AND 255),
    description text NOT NULL CONSTRAINT sideboard_guides_description_length CHECK (char_length(description) <= 500000),
    notes text NOT NULL CONSTRAINT sideboard_guides_notes_length CHECK (char_length(notes) <= 500000),
    visibility text NOT NULL CONSTRAINT sideboard_guides_visibility_level CHECK (visibility IN ('public', 'unlisted', 'private')),
    tags text[] NOT NULL CONSTRAINT sideboard_guides_tags_count CHECK (cardinality(tags) <= 50),
    format text CONSTRAINT sideboard_guides_format_length CHECK (char_length(format) <= 50),
    thumbnail text CONSTRAINT sideboard_guides_thumbnail_length CHECK (char_length(thumbnail) <= 255),
    youtube_url text CONSTRAINT sideboard_guides_youtube_url_length CHECK (char_length(youtube_url) <= 500),
    premium boolean NOT NULL,
    is_archived boolean NOT NULL DEFAULT false,
    -- Counters on the row: nothing increments them yet (no guide view or like endpoint), and
    -- the counter sorts then need no join. Move them to a stats table, as decks did, once
    -- views are counted.
    pageviews bigint NOT NULL DEFAULT 0,
    likes bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- One index per sort key, archived guides left out as lists do; the visibility condition's
-- columns are included so the count and the page's id lookup are index-only scans
-- (docs/benchmarks.md, "Sideboard guide list query plans"). asc scans them backward.
CREATE INDEX sideboard_guides_list_by_edited ON sideboard_guides (game, updated_at DESC, id DESC)
    INCLUDE (visibility, owner_id) WHERE NOT is_archived;
CREATE INDEX sideboard_guides_list_by_created ON sideboard_guides (game, created_at DESC, id DESC)
    INCLUDE (visibility, owner_id) WHERE NOT is_archived;
CREATE INDEX sideboard_guides_list_by_likes ON sideboard_guides (game, likes DESC, id DESC)
    INCLUDE (visibility, owner_id) WHERE NOT is_archived;
CREATE INDEX sideboard_guides_list_by_views ON sideboard_guides (game, pageviews DESC, id DESC)
    INCLUDE (visibility, owner_id) WHERE NOT is_archived;
-- `my` and the author filter.
CREATE INDEX sideboard_guides_by_owner ON sideboard_guides (owner_id, updated_at DESC, id DESC)
    WHERE NOT is_archived;
-- Case-insensitive substring filters (ILIKE '%q%') on the name and the plain format string.
CREATE INDEX sideboard_guides_name_trigram ON sideboard_guides USING gin (name gin_trgm_ops);
CREATE INDEX sideboard_guides_format_trigram ON sideboard_guides USING gin (format gin_trgm_ops);

-- Deck membership: the primary deck and every attached one. `decks.has_sideboard_guide`
-- mirrors "attached to a non-archived guide" and is kept in the transaction of every write
-- that changes it (docs/architecture.md).
CREATE TABLE sideboard_guide_decks (
    guide_id uuid NOT NULL REFERENCES sideboard_guides (id) ON DELETE CASCADE,
    deck_id uuid NOT NULL REFERENCES decks (id) ON DELETE CASCADE,
    is_primary boolean NOT NULL,
    attached_at timestamptz NOT NULL,
    PRIMARY KEY (guide_id, deck_id)
);
CREATE UNIQUE INDEX sideboard_guide_decks_one_primary ON sideboard_guide_decks (guide_id)
    WHERE is_primary;
-- The deckId filter and the has_sideboard_guide recomputation go from deck to guides.
CREATE INDEX sideboard_guide_decks_by_deck ON sideboard_guide_decks (deck_id, guide_id);

CREATE TABLE sideboard_matchups (
    id uuid PRIMARY KEY,
    guide_id uuid NOT NULL REFERENCES sideboard_guides (id) ON DELETE CASCADE,
    opponent_deck_name text NOT NULL CHECK (char_length(opponent_deck_name) BETWEEN 1 AND 255),
    opponent_archetype text CHECK (char_length(opponent_archetype) <= 100),
    difficulty text NOT NULL CHECK (difficulty IN ('VERY_EASY', 'EASY', 'MEDIUM', 'HARD', 'VERY_HARD')),
    notes text NOT NULL CHECK (char_length(notes) <= 50000),
    play_notes text NOT NULL CHECK (char_length(play_notes) <= 50000),
    draw_notes text NOT NULL CHECK (char_length(draw_notes) <= 50000),
    sort_order integer NOT NULL CHECK (sort_order BETWEEN 0 AND 100000),
    thumbnail text CHECK (char_length(thumbnail) <= 255),
    is_featured boolean NOT NULL,
    -- The overrides as the domain serialises them: always read and written whole.
    special_card_overrides jsonb NOT NULL,
    created_at timestamptz NOT NULL
);
-- The detail's order, and the matchup count of a page's guides.
CREATE INDEX sideboard_matchups_by_guide ON sideboard_matchups (guide_id, sort_order, created_at, id);
CREATE INDEX sideboard_matchups_archetype_trigram ON sideboard_matchups
    USING gin (opponent_archetype gin_trgm_ops);
