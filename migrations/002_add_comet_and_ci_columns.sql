-- 002: COMET, corpus BLEU and bootstrap confidence-interval columns (SPEC §7, §9).

ALTER TABLE run_cards
    ADD COLUMN comet_score real,
    ADD COLUMN corpus_bleu real,
    ADD COLUMN chrf_ci_lower real,
    ADD COLUMN chrf_ci_upper real,
    ADD COLUMN exact_match_ci_lower real,
    ADD COLUMN exact_match_ci_upper real;
