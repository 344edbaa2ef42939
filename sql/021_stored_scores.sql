-- tame-wh warehouse schema, version 21: corpus scores stored beside the sums they come from.
--
-- `run_sums` and `run_bin_sums` gain the scores of their summed statistics (BLEU, chrF++, TER;
-- for the bins also the TM baseline's BLEU and chrF++), computed by the score macros when the
-- sums are written (sql/refresh_run_sums.sql, sql/refresh_audit_sums.sql). The views read them
-- instead of expanding the macros: a macro is expanded by substitution, and the leaderboard,
-- which reaches the scores through several views, spent four fifths of its time planning those
-- expansions. The values are the same operations on the same sums, so every score is unchanged
-- to the bit. The rows already stored are scored here (the score macros are applied before the
-- numbered files: warehouse/store/schema.py).
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).

ALTER TABLE run_sums ADD COLUMN bleu DOUBLE;

ALTER TABLE run_sums ADD COLUMN chrf_plus_plus DOUBLE;

ALTER TABLE run_sums ADD COLUMN ter DOUBLE;

UPDATE run_sums SET
    bleu = bleu_score(bleu_stats),
    chrf_plus_plus = chrf_score(chrf_stats),
    ter = ter_score(ter_stats);

ALTER TABLE run_bin_sums ADD COLUMN bleu DOUBLE;

ALTER TABLE run_bin_sums ADD COLUMN chrf_plus_plus DOUBLE;

ALTER TABLE run_bin_sums ADD COLUMN tm_bleu DOUBLE;           -- NULL: no TM baseline

ALTER TABLE run_bin_sums ADD COLUMN tm_chrf_plus_plus DOUBLE;

UPDATE run_bin_sums SET
    bleu = bleu_score(bleu_stats),
    chrf_plus_plus = chrf_score(chrf_stats),
    tm_bleu = bleu_score(tm_bleu_stats),
    tm_chrf_plus_plus = chrf_score(tm_chrf_stats);
