DROP TABLE dpop_proofs;
