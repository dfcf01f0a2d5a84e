-- Decks, their history, their counters and their view records.

-- Trigram indexes serve the case-insensitive substring filter on names (ILIKE '%q%').
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

CREATE TABLE decks (
    id uuid PRIMARY KEY,
    game text NOT NULL CONSTRAINT decks_game_fkey REFERENCES games (slug),
    owner_id uuid NOT NULL CONSTRAINT decks_owner_id_fkey REFERENCES users (id),
    name text NOT NULL CONSTRAINT decks_name_length CHECK (char_length(name) BETWEEN 1 AND 255),
    notes text NOT NULL CONSTRAINT decks_notes_length CHECK (char_length(notes) <= 50000),
    visibility text NOT NULL CONSTRAINT decks_visibility_level CHECK (visibility IN ('public', 'unlisted', 'private')),
    format_id uuid CONSTRAINT decks_format_id_fkey REFERENCES formats (id),
    youtube_url text CONSTRAINT decks_youtube_url_length CHECK (char_length(youtube_url) <= 500),
    thumbnail text CONSTRAINT decks_thumbnail_length CHECK (char_length(thumbnail) <= 255),
    legal boolean NOT NULL,
    archetype text CONSTRAINT decks_archetype_length CHECK (char_length(archetype) <= 100),
    -- The content's card lines, featured choices and derived summary, as the domain serialises
    -- them: always read and written whole, never queried inside.
    cards jsonb NOT NULL,
    featured jsonb,
    summary jsonb NOT NULL,
    source_provider text NOT NULL,
    source_external_id text CONSTRAINT decks_source_external_id_length CHECK (char_length(source_external_id) <= 128),
    source_external_version text CONSTRAINT decks_source_external_version_length CHECK (char_length(source_external_version) <= 32),
    source_external_url text,
    source_imported_at timestamptz,
    is_archived boolean NOT NULL DEFAULT false,
    has_guide boolean NOT NULL DEFAULT false,
    has_sideboard_guide boolean NOT NULL DEFAULT false,
    version integer NOT NULL CONSTRAINT decks_version_positive CHECK (version >= 1),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- The provenance triple is unique per owner when an external id is given; a missing external
-- version counts as "".
CREATE UNIQUE INDEX decks_provenance_key ON decks
    (owner_id, source_provider, source_external_id, coalesce(source_external_version, ''))
    WHERE source_external_id IS NOT NULL;

-- List orders by date: one index per sort key, archived decks left out as lists do. The
-- columns of the visibility condition (anonymous or signed in) and of the format and flag
-- filters are included so that those are checked in the index: the list count and the page's id
-- lookup are index-only scans (docs/benchmarks.md, "Deck list query plans"). Saves change
-- updated_at, so these entries are rewritten on a save anyway; the width costs no HOT updates.
CREATE INDEX decks_list_by_edited ON decks (game, updated_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal)
    WHERE NOT is_archived;
CREATE INDEX decks_list_by_created ON decks (game, created_at DESC, id DESC)
    INCLUDE (visibility, owner_id, format_id, has_guide, has_sideboard_guide, legal)
    WHERE NOT is_archived;
CREATE INDEX decks_by_owner ON decks (owner_id, updated_at DESC, id DESC);
CREATE INDEX decks_name_trigram ON decks USING gin (name gin_trgm_ops);

-- One row per save, the create event first.
CREATE TABLE deck_versions (
    deck_id uuid NOT NULL REFERENCES decks (id) ON DELETE CASCADE,
    version_number integer NOT NULL CHECK (version_number >= 1),
    history_type text NOT NULL CHECK (history_type IN ('create', 'update', 'rollback')),
    restored_from integer,
    content jsonb NOT NULL,
    summary jsonb NOT NULL,
    edited_at timestamptz NOT NULL,
    PRIMARY KEY (deck_id, version_number),
    CHECK ((history_type = 'rollback') = (restored_from IS NOT NULL))
);

-- Counters live apart from the deck row: a view updates this small row, never the deck's, so
-- views neither bloat the deck table nor churn its indexes. `game` is copied (a deck never
-- changes game) so that the counter sorts are served by these indexes alone.
CREATE TABLE deck_stats (
    deck_id uuid PRIMARY KEY REFERENCES decks (id) ON DELETE CASCADE,
    game text NOT NULL,
    pageviews bigint NOT NULL DEFAULT 0,
    likes bigint NOT NULL DEFAULT 0,
    -- Log-space decayed view count (see the domain's decks::trending); -Infinity when unviewed.
    trending double precision NOT NULL DEFAULT '-Infinity'
);
CREATE INDEX deck_stats_by_views ON deck_stats (game, pageviews DESC, deck_id DESC);
CREATE INDEX deck_stats_by_likes ON deck_stats (game, likes DESC, deck_id DESC);
CREATE INDEX deck_stats_by_trending ON deck_stats (game, trending DESC, deck_id DESC);

-- The last counted view per (deck, visitor): the dedupe window. Visitors are keyed hashes,
-- never raw addresses or ids.
CREATE TABLE deck_views (
    deck_id uuid NOT NULL REFERENCES decks (id) ON DELETE CASCADE,
    visitor bytea NOT NULL CHECK (octet_length(visitor) = 32),
    counted_at timestamptz NOT NULL,
    PRIMARY KEY (deck_id, visitor)
);
CREATE INDEX deck_views_by_age ON deck_views (counted_at);
