-- Recompute the stored sums of one run ($run_id): its whole-run row in run_sums and its rows in
-- run_bin_sums for every audit of its test set. Run after the run's rows are written.

DELETE FROM run_sums WHERE run_id = $run_id;

INSERT INTO run_sums
SELECT
    st.run_id,
    count(*),
    (SELECT count(*) FROM hypotheses h WHERE h.run_id = $run_id AND h.error IS NOT NULL),
    CAST(bleu_stats_sum(st.bleu_stats) AS BIGINT[]),
    CAST(chrf_stats_sum(st.chrf_stats) AS BIGINT[]),
    ter_stats_sum(st.ter_stats),
    count(st.exact_match),
    count(*) FILTER (WHERE st.exact_match),
    avg(st.length_ratio),
    (SELECT count(latency_s) FROM hypotheses h WHERE h.run_id = $run_id),
    (SELECT avg(latency_s) FROM hypotheses h WHERE h.run_id = $run_id),
    (SELECT quantile_cont(latency_s, 0.5) FROM hypotheses h WHERE h.run_id = $run_id),
    (SELECT quantile_cont(latency_s, 0.95) FROM hypotheses h WHERE h.run_id = $run_id)
FROM segment_stats st
WHERE st.run_id = $run_id
GROUP BY st.run_id;

DELETE FROM run_bin_sums WHERE run_id = $run_id;

INSERT INTO run_bin_sums
SELECT
    st.run_id,
    e.audit_id,
    coalesce(e.bin, 'all'),
    count(*),
    sum(e.source_exposure),
    CAST(bleu_stats_sum(st.bleu_stats) AS BIGINT[]),
    CAST(chrf_stats_sum(st.chrf_stats) AS BIGINT[]),
    CAST(bleu_stats_sum(tm.bleu_stats) AS BIGINT[]),
    CAST(chrf_stats_sum(tm.chrf_stats) AS BIGINT[])
FROM segment_stats st
JOIN runs r ON r.run_id = st.run_id
JOIN audits a ON a.test_corpus_id = r.test_corpus_id
JOIN exposures e ON e.audit_id = a.audit_id AND e.seg_idx = st.seg_idx
JOIN tm_segment_stats tm ON tm.audit_id = e.audit_id AND tm.seg_idx = e.seg_idx
WHERE st.run_id = $run_id
GROUP BY GROUPING SETS ((st.run_id, e.audit_id, e.bin), (st.run_id, e.audit_id));
