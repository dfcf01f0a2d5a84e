UPDATE format_rules SET sideboard_max = NULL
WHERE format_id IN (SELECT id FROM formats WHERE game = 'mtg' AND slug = 'commander');
DELETE FROM card_text_rules WHERE partner OR partner_with IS NOT NULL;
ALTER TABLE card_text_rules DROP CONSTRAINT card_text_rules_one_partner,
    DROP COLUMN partner_with, DROP COLUMN partner;
