-- Recompute run_bin_sums for one audit ($audit_id) across every run of its test set. Run after
-- the audit's exposures and TM statistics are written (an audit without a TM baseline has none:
-- its TM sums and scores are NULL).

DELETE FROM run_bin_sums WHERE audit_id = $audit_id;

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
    FROM exposures e
    JOIN audits a ON a.audit_id = e.audit_id
    JOIN runs r ON r.test_corpus_id = a.test_corpus_id
    JOIN segment_stats st ON st.run_id = r.run_id AND st.seg_idx = e.seg_idx
    LEFT JOIN tm_segment_stats tm ON tm.audit_id = e.audit_id AND tm.seg_idx = e.seg_idx
    WHERE e.audit_id = $audit_id
    GROUP BY GROUPING SETS ((st.run_id, e.audit_id, e.bin), (st.run_id, e.audit_id))
);
