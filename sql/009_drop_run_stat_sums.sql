-- tame-wh warehouse schema, version 9: `run_surface` reads the stored sums directly and the
-- alias view `run_stat_sums` (a copy of `run_sums` under another name) is gone.

CREATE OR REPLACE VIEW run_surface AS
SELECT
    run_id,
    n_segments,
    bleu_score(bleu_stats) AS bleu,
    chrf_score(chrf_stats) AS chrf_plus_plus,
    ter_score(ter_stats) AS ter,
    n_exact / nullif(n_exact_evaluated, 0) AS exact_match_rate,
    length_ratio
FROM run_sums;

DROP VIEW run_stat_sums;
