-- tame-wh warehouse schema, version 3: per-run sums of the stored sufficient statistics.
-- A corpus score is its metric's formula applied to summed statistics (SPEC §5.1); the sums are
-- written out element by element, which DuckDB runs far faster than list lambdas.

CREATE VIEW run_stat_sums AS
SELECT
    run_id,
    count(*) AS n_segments,
    [
        sum(bleu_stats[1]), sum(bleu_stats[2]), sum(bleu_stats[3]), sum(bleu_stats[4]),
        sum(bleu_stats[5]), sum(bleu_stats[6]), sum(bleu_stats[7]), sum(bleu_stats[8]),
        sum(bleu_stats[9]), sum(bleu_stats[10])
    ] AS bleu_stats,
    [
        sum(chrf_stats[1]), sum(chrf_stats[2]), sum(chrf_stats[3]), sum(chrf_stats[4]),
        sum(chrf_stats[5]), sum(chrf_stats[6]), sum(chrf_stats[7]), sum(chrf_stats[8]),
        sum(chrf_stats[9]), sum(chrf_stats[10]), sum(chrf_stats[11]), sum(chrf_stats[12]),
        sum(chrf_stats[13]), sum(chrf_stats[14]), sum(chrf_stats[15]), sum(chrf_stats[16]),
        sum(chrf_stats[17]), sum(chrf_stats[18]), sum(chrf_stats[19]), sum(chrf_stats[20]),
        sum(chrf_stats[21]), sum(chrf_stats[22]), sum(chrf_stats[23]), sum(chrf_stats[24])
    ] AS chrf_stats,
    [
        sum(ter_stats[1]), sum(ter_stats[2])
    ] AS ter_stats,
    count(exact_match) AS n_exact_evaluated,
    count(*) FILTER (WHERE exact_match) AS n_exact,
    avg(length_ratio) AS length_ratio
FROM segment_stats
GROUP BY run_id;

-- One row per run: identity, test set, counts and summed statistics (what `runs list` reads).
CREATE VIEW run_summaries AS
SELECT
    r.run_id,
    r.model_slug,
    r.condition,
    c.name AS test_set,
    r.test_corpus_id,
    r.n_entries,
    (SELECT count(*) FROM hypotheses h WHERE h.run_id = r.run_id AND h.error IS NOT NULL)
        AS n_errors,
    r.created_at,
    r.ingested_at,
    s.bleu_stats,
    s.chrf_stats,
    s.ter_stats,
    s.n_exact / nullif(s.n_exact_evaluated, 0) AS exact_match_rate,
    s.length_ratio
FROM runs r
JOIN corpora c ON c.corpus_id = r.test_corpus_id
LEFT JOIN run_stat_sums s USING (run_id);
