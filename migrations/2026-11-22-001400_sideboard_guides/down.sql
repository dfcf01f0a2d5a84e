DROP TABLE sideboard_matchups;
DROP TABLE sideboard_guide_decks;
DROP TABLE sideboard_guides;
UPDATE decks SET has_sideboard_guide = false WHERE has_sideboard_guide;
