ALTER INDEX decks_card_ids RESET (gin_pending_list_limit);
ALTER INDEX decks_name_trigram RESET (gin_pending_list_limit);
ALTER INDEX sideboard_guides_name_trigram RESET (gin_pending_list_limit);
ALTER INDEX sideboard_guides_format_trigram RESET (gin_pending_list_limit);
ALTER INDEX sideboard_matchups_archetype_trigram RESET (gin_pending_list_limit);
