-- Deck content is compressed with lz4 instead of PostgreSQL's default pglz. Every save writes
-- the whole content into its history record (about 14 KB of JSON, 6 KB stored either way), and
-- under PATCH load pglz_compress was 14% of PostgreSQL's CPU; with lz4 a PATCH cost PostgreSQL
-- 13 to 27% less CPU and the rate rose by 9 to 25% (docs/benchmarks.md, "Third pass"). Values
-- already stored keep their compression until rewritten. A server built without lz4 refuses the
-- method; the content then stays with pglz, which every server has.
DO $$
BEGIN
    ALTER TABLE decks
        ALTER COLUMN cards SET COMPRESSION lz4,
        ALTER COLUMN featured SET COMPRESSION lz4;
    ALTER TABLE deck_versions ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4: deck content stays compressed with pglz';
END
$$;
