-- Recompute the stored sums of the runs in $run_ids (a VARCHAR[]): their whole-run rows in
-- run_sums and their rows in run_bin_sums for every audit of their test sets. Run after the
-- runs' rows are written. The rows are read from the relations named by $segment_stats,
-- $hypotheses and $runs: the stored tables, or, for runs just inserted, the rows that were
-- inserted (on a lake, reading the stored tables lists each of their data files); floating-point
-- sums run in segment order, so both give the same sums to the last bit. Runs just inserted have
-- no sums: their DELETE statements are skipped (warehouse/store/sums.py).

DELETE FROM run_sums WHERE run_id IN (SELECT unnest($run_ids));

INSERT INTO run_sums
WITH stats AS (
    SELECT
        run_id,
        count(*) AS n_segments,
        CAST(bleu_stats_sum(bleu_stats) AS BIGINT[]) AS bleu_stats,
        CAST(chrf_stats_sum(chrf_stats) AS BIGINT[]) AS chrf_stats,
        ter_stats_sum(ter_stats) AS ter_stats,
        count(exact_match) AS n_exact_evaluated,
        count(*) FILTER (WHERE exact_match) AS n_exact,
        avg(length_ratio ORDER BY seg_idx) AS length_ratio
    FROM query_table($segment_stats)
    WHERE run_id IN (SELECT unnest($run_ids))
    GROUP BY run_id
),
entries AS (
    SELECT
        run_id,
        count(*) FILTER (WHERE error IS NOT NULL) AS n_errors,
        count(latency_s) AS n_latencies,
        avg(latency_s ORDER BY seg_idx) AS avg_latency,
        quantile_cont(latency_s, 0.5) AS median_latency,
        quantile_cont(latency_s, 0.95) AS p95_latency
    FROM query_table($hypotheses)
    WHERE run_id IN (SELECT unnest($run_ids))
    GROUP BY run_id
)
SELECT s.run_id, s.n_segments, coalesce(e.n_errors, 0), s.bleu_stats, s.chrf_stats, s.ter_stats,
       s.n_exact_evaluated, s.n_exact, s.length_ratio, coalesce(e.n_latencies, 0),
       e.avg_latency, e.median_latency, e.p95_latency,
       bleu_score(s.bleu_stats), chrf_score(s.chrf_stats), ter_score(s.ter_stats)
FROM stats s
LEFT JOIN entries e USING (run_id);

DELETE FROM run_bin_sums WHERE run_id IN (SELECT unnest($run_ids));

INSERT INTO run_bin_sums
SELECT *, bleu_score(bleu_stats), chrf_score(chrf_stats), bleu_score(tm_bleu_stats),
       chrf_score(tm_chrf_stats)
FROM (
    SELECT
        st.run_id,
        e.audit_id,
        coalesce(e.bin, 'all'),
        count(*),
        sum(e.source_exposure ORDER BY e.seg_idx),
        sum(e.target_exposure ORDER BY e.seg_idx),
        CAST(bleu_stats_sum(st.bleu_stats) AS BIGINT[]) AS bleu_stats,
        CAST(chrf_stats_sum(st.chrf_stats) AS BIGINT[]) AS chrf_stats,
        CASE WHEN count(tm.bleu_stats) > 0
             THEN CAST(bleu_stats_sum(tm.bleu_stats) AS BIGINT[]) END AS tm_bleu_stats,
        CASE WHEN count(tm.chrf_stats) > 0
             THEN CAST(chrf_stats_sum(tm.chrf_stats) AS BIGINT[]) END AS tm_chrf_stats
    FROM query_table($segment_stats) st
    JOIN query_table($runs) r ON r.run_id = st.run_id
    JOIN audits a ON a.test_corpus_id = r.test_corpus_id
    JOIN exposures e ON e.audit_id = a.audit_id AND e.seg_idx = st.seg_idx
    LEFT JOIN tm_segment_stats tm ON tm.audit_id = e.audit_id AND tm.seg_idx = e.seg_idx
    WHERE st.run_id IN (SELECT unnest($run_ids))
    GROUP BY GROUPING SETS ((st.run_id, e.audit_id, e.bin), (st.run_id, e.audit_id))
);
