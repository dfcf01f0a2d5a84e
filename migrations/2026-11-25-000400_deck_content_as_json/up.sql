-- Deck content is stored as json (the text as written) instead of jsonb. Nothing queries inside
-- these columns: they are read and written whole, so jsonb's parsed form only cost time. Every
-- read of a jsonb value prints its tree back into text: reading a deck's card list (14 KB of
-- JSON) ran at 15,000 to 18,000 a second as jsonb against 28,000 to 36,000 as json on the load
-- test's data (docs/benchmarks.md, "Fifth pass"), and every write parsed the text into a tree
-- where json only checks it.
--
-- Changing a column's type resets its compression, so the rewrite names it again: lz4 where
-- the server has it (as migration 2026-11-25-000200 chose), else the default.
DO $$
DECLARE
    method text := CASE
        WHEN (SELECT 'lz4' = ANY (enumvals) FROM pg_settings
              WHERE name = 'default_toast_compression') THEN 'lz4'
        ELSE 'default' END;
BEGIN
    EXECUTE format('ALTER TABLE decks
        ALTER COLUMN cards TYPE json USING cards::json,
        ALTER COLUMN cards SET COMPRESSION %1$s,
        ALTER COLUMN featured TYPE json USING featured::json,
        ALTER COLUMN featured SET COMPRESSION %1$s,
        ALTER COLUMN summary TYPE json USING summary::json', method);
    EXECUTE format('ALTER TABLE deck_versions
        ALTER COLUMN content TYPE json USING content::json,
        ALTER COLUMN content SET COMPRESSION %1$s,
        ALTER COLUMN summary TYPE json USING summary::json', method);
END
$$;
