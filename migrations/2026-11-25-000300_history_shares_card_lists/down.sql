-- Every record gets its card list back before the column that shares them goes.
UPDATE deck_versions record
SET content = record.content || jsonb_build_object('cards', holder.content -> 'cards')
FROM deck_versions holder
WHERE holder.deck_id = record.deck_id AND holder.version_number = record.cards_from;
ALTER TABLE deck_versions DROP COLUMN cards_from;
