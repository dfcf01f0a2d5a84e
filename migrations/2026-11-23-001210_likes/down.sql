DROP TABLE sideboard_guide_likes;
DROP TABLE deck_likes;
