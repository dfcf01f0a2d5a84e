DO $$
DECLARE
    method text := CASE
        WHEN (SELECT 'lz4' = ANY (enumvals) FROM pg_settings
              WHERE name = 'default_toast_compression') THEN 'lz4'
        ELSE 'default' END;
BEGIN
    EXECUTE format('ALTER TABLE decks
        ALTER COLUMN cards TYPE jsonb USING cards::jsonb,
        ALTER COLUMN cards SET COMPRESSION %1$s,
        ALTER COLUMN featured TYPE jsonb USING featured::jsonb,
        ALTER COLUMN featured SET COMPRESSION %1$s,
        ALTER COLUMN summary TYPE jsonb USING summary::jsonb', method);
    EXECUTE format('ALTER TABLE deck_versions
        ALTER COLUMN content TYPE jsonb USING content::jsonb,
        ALTER COLUMN content SET COMPRESSION %1$s,
        ALTER COLUMN summary TYPE jsonb USING summary::jsonb', method);
END
$$;
