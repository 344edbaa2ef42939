-- tame-wh exposure views: an audit's summary and bins, and each run's scores per bin against the
-- translation-memory baseline, with GenGap (docs/exposure.md). A test set may be audited against
-- several training corpora, so every row carries its audit_id.
--
-- Each view and macro is defined here once; `tame-wh init` (and every command that upgrades the
-- warehouse) applies the files of sql/views/ in order, CREATE OR REPLACE, whenever the schema
-- version moves.

-- Per audit and side searched (source, target, pair; docs/exposure.md, "Sides"): distribution of
-- exposure, exact share and the shares at or above the audit's three thresholds (for the pair
-- side: PairLeak@t). A side the audit did not search has no row.
CREATE OR REPLACE VIEW audit_exposure_summary AS
WITH sides AS (
    SELECT audit_id, 'source' AS side, 1 AS side_order, source_exposure AS exposure,
           source_exact AS exact
    FROM exposures
    UNION ALL
    SELECT audit_id, 'target', 2, target_exposure, target_exact FROM exposures
    UNION ALL
    SELECT audit_id, 'pair', 3, pair_exposure, pair_exact FROM exposures
)
SELECT
    s.audit_id,
    s.side,
    s.side_order,
    count(*) AS n_segments,
    avg(s.exposure) AS mean,
    quantile_cont(s.exposure, 0.5) AS median,
    quantile_cont(s.exposure, 0.05) AS p05,
    quantile_cont(s.exposure, 0.25) AS p25,
    quantile_cont(s.exposure, 0.75) AS p75,
    quantile_cont(s.exposure, 0.95) AS p95,
    max(s.exposure) AS max,
    avg(s.exact::DOUBLE) AS exact_share,
    a.leak_thresholds AS thresholds,
    [avg((s.exposure >= a.leak_thresholds[1])::DOUBLE),
     avg((s.exposure >= a.leak_thresholds[2])::DOUBLE),
     avg((s.exposure >= a.leak_thresholds[3])::DOUBLE)] AS shares_at_or_above
FROM sides s
JOIN audits a USING (audit_id)
WHERE s.exposure IS NOT NULL
GROUP BY s.audit_id, s.side, s.side_order, a.leak_thresholds;

-- Per audit and bin (every bin listed, empty ones with 0): count, share, mean source and target
-- exposure (NULL for a side the audit did not search). The exact bin is the one of the side the
-- bins follow (`exact_bin`).
CREATE OR REPLACE VIEW audit_bins AS
WITH bins AS (
    SELECT a.audit_id,
           CASE WHEN b.bin = 'exact' THEN exact_bin(audit_side(a.config)) ELSE b.bin END AS bin,
           b.bin_order
    FROM audits a
    CROSS JOIN (VALUES ('exact', 1), ('near', 2), ('medium', 3), ('far', 4)) b(bin, bin_order)
)
SELECT
    a.audit_id,
    b.bin,
    b.bin_order,
    count(e.seg_idx) AS n_segments,
    count(e.seg_idx) / a.n_segments AS share,
    avg(e.source_exposure) AS mean_source_exposure,
    avg(e.target_exposure) AS mean_target_exposure
FROM audits a
JOIN bins b ON b.audit_id = a.audit_id
LEFT JOIN exposures e ON e.audit_id = a.audit_id AND e.bin = b.bin
GROUP BY a.audit_id, b.bin, b.bin_order, a.n_segments;

-- ---------------------------------------------------------------------------------------------
-- Exposure per run (docs/exposure.md): bins, TM baseline, GenGap. A test set may be audited against
-- several training corpora, so every row carries its audit_id.

CREATE OR REPLACE VIEW run_bins AS
WITH pairs AS (
    SELECT r.run_id, a.audit_id, a.train_corpus_id, a.n_segments AS total,
           audit_side(a.config) AS side
    FROM runs r JOIN audits a ON a.test_corpus_id = r.test_corpus_id
),
bins(bin, bin_order) AS (
    VALUES ('all', 0), ('exact', 1), ('near', 2), ('medium', 3), ('far', 4)
),
pair_bins AS (
    SELECT p.*, CASE WHEN b.bin = 'exact' THEN exact_bin(p.side) ELSE b.bin END AS bin,
           b.bin_order
    FROM pairs p
    CROSS JOIN bins b
)
SELECT
    p.run_id,
    p.audit_id,
    p.train_corpus_id,
    p.bin,
    p.bin_order,
    coalesce(g.n_segments, 0) AS n_segments,
    coalesce(g.n_segments, 0) / p.total AS share,
    g.sum_source_exposure / g.n_segments AS mean_source_exposure,
    g.sum_target_exposure / g.n_segments AS mean_target_exposure,
    g.bleu,
    g.chrf_plus_plus,
    g.tm_bleu,
    g.tm_chrf_plus_plus,
    g.bleu - g.tm_bleu AS delta_bleu,
    g.chrf_plus_plus - g.tm_chrf_plus_plus AS delta_chrf_plus_plus
FROM pair_bins p
LEFT JOIN run_bin_sums g
    ON g.run_id = p.run_id AND g.audit_id = p.audit_id AND g.bin = p.bin;

-- GenGap = score on `near` - score on `far` (NULL when either bin is empty), for the system and
-- the TM, with the audit's PairLeak and exposure summary.
CREATE OR REPLACE VIEW run_exposure AS
WITH by_bin AS (
    SELECT
        run_id, audit_id, train_corpus_id,
        max(bleu) FILTER (WHERE bin = 'all') AS bleu,
        max(tm_bleu) FILTER (WHERE bin = 'all') AS tm_bleu,
        max(tm_chrf_plus_plus) FILTER (WHERE bin = 'all') AS tm_chrf_plus_plus,
        max(delta_bleu) FILTER (WHERE bin = 'all') AS delta_tm_bleu,
        max(delta_chrf_plus_plus) FILTER (WHERE bin = 'all') AS delta_tm_chrf_plus_plus,
        max(bleu) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(bleu) FILTER (WHERE bin = 'far' AND n_segments > 0) AS gengap_bleu,
        max(chrf_plus_plus) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(chrf_plus_plus) FILTER (WHERE bin = 'far' AND n_segments > 0) AS gengap_chrf,
        max(tm_bleu) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(tm_bleu) FILTER (WHERE bin = 'far' AND n_segments > 0) AS tm_gengap_bleu,
        max(tm_chrf_plus_plus) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(tm_chrf_plus_plus) FILTER (WHERE bin = 'far' AND n_segments > 0)
            AS tm_gengap_chrf,
        max(share) FILTER (WHERE bin = 'source_exact') AS source_exact_share,
        max(share) FILTER (WHERE bin = 'near') AS near_share,
        max(share) FILTER (WHERE bin = 'medium') AS medium_share,
        max(share) FILTER (WHERE bin = 'far') AS far_share,
        max(share) FILTER (WHERE bin = 'target_exact') AS target_exact_share
    FROM run_bins
    GROUP BY run_id, audit_id, train_corpus_id
),
-- The audit's summary side by side (one reference to the summary: each would be planned and run
-- on its own).
summary AS (
    SELECT
        audit_id,
        any_value(mean) FILTER (WHERE side = 'source') AS mean_source_exposure,
        any_value(mean) FILTER (WHERE side = 'target') AS mean_target_exposure,
        any_value(mean) FILTER (WHERE side = 'pair') AS mean_pair_exposure,
        any_value(shares_at_or_above) FILTER (WHERE side = 'pair') AS pair_shares,
        any_value(exact_share) FILTER (WHERE side = 'pair') AS pair_exact_share
    FROM audit_exposure_summary
    GROUP BY audit_id
)
SELECT
    b.*,
    s.mean_source_exposure,
    s.mean_target_exposure,
    s.mean_pair_exposure,
    s.pair_shares[1] AS pairleak_070,
    s.pair_shares[2] AS pairleak_085,
    s.pair_shares[3] AS pairleak_095,
    s.pair_exact_share,
    a.mode AS audit_mode,
    audit_measure(a.config) AS audit_measure,
    a.created_at AS audited_at,
    audit_side(a.config) AS audit_side
FROM by_bin b
JOIN audits a USING (audit_id)
LEFT JOIN summary s USING (audit_id);

-- Lenses on one test set and training corpus, segment by segment: the newest audit by each
-- measure (one of both sides first, then of the source; exact ones first) side by side, with
-- each side's exposure and bin by every lens, and
-- the substring lens's details (docs/exposure.md, "Measures" and "Substring lens"). A row needs
-- two lenses at least; a lens not run is NULL. Where they disagree is where a test segment sits
-- inside a long training text, or shares a long verbatim stretch with one.
CREATE OR REPLACE VIEW exposure_lenses AS
WITH measured AS (
    SELECT audit_id, test_corpus_id, train_corpus_id, mode, created_at,
           audit_measure(config) AS measure, audit_side(config) AS side
    FROM audits
),
newest AS (
    SELECT * FROM measured
    QUALIFY row_number() OVER (
        PARTITION BY test_corpus_id, train_corpus_id, measure
        ORDER BY side_rank(side), mode = 'exact' DESC, created_at DESC, audit_id) = 1
),
paired AS (
    SELECT test_corpus_id, train_corpus_id FROM newest GROUP BY ALL HAVING count(*) >= 2
),
lens AS (
    SELECT n.test_corpus_id, n.train_corpus_id, n.measure, n.audit_id, e.*,
           s.chars AS s_chars, s.longest_chars AS s_longest, s.whole_count AS s_whole,
           s.train_seg_idx AS s_row, s.train_offset AS s_offset,
           s.words8_found / nullif(s.words8_total, 0) AS s_words8,
           s.words13_found / nullif(s.words13_total, 0) AS s_words13,
           t.chars AS t_chars, t.longest_chars AS t_longest, t.whole_count AS t_whole
    FROM newest n
    JOIN paired USING (test_corpus_id, train_corpus_id)
    JOIN exposures e ON e.audit_id = n.audit_id
    LEFT JOIN substring_lens s
        ON s.audit_id = e.audit_id AND s.seg_idx = e.seg_idx AND s.side = 'source'
    LEFT JOIN substring_lens t
        ON t.audit_id = e.audit_id AND t.seg_idx = e.seg_idx AND t.side = 'target'
)
SELECT
    test_corpus_id,
    train_corpus_id,
    seg_idx,
    any_value(audit_id) FILTER (measure = 'jaccard') AS jaccard_audit_id,
    any_value(audit_id) FILTER (measure = 'containment') AS containment_audit_id,
    any_value(audit_id) FILTER (measure = 'substring') AS substring_audit_id,
    any_value(audit_id) FILTER (measure = 'minhash') AS minhash_audit_id,
    any_value(source_exposure) FILTER (measure = 'jaccard') AS source_jaccard,
    any_value(source_exposure) FILTER (measure = 'containment') AS source_containment,
    any_value(source_exposure) FILTER (measure = 'substring') AS source_substring,
    any_value(source_exposure) FILTER (measure = 'minhash') AS source_minhash,
    any_value(target_exposure) FILTER (measure = 'jaccard') AS target_jaccard,
    any_value(target_exposure) FILTER (measure = 'containment') AS target_containment,
    any_value(target_exposure) FILTER (measure = 'substring') AS target_substring,
    any_value(target_exposure) FILTER (measure = 'minhash') AS target_minhash,
    any_value(pair_exposure) FILTER (measure = 'jaccard') AS pair_jaccard,
    any_value(pair_exposure) FILTER (measure = 'containment') AS pair_containment,
    any_value(pair_exposure) FILTER (measure = 'substring') AS pair_substring,
    any_value(bin) FILTER (measure = 'jaccard') AS jaccard_bin,
    any_value(bin) FILTER (measure = 'containment') AS containment_bin,
    any_value(bin) FILTER (measure = 'substring') AS substring_bin,
    any_value(bin) FILTER (measure = 'minhash') AS minhash_bin,
    count(DISTINCT bin) = 1 AS bins_agree,
    any_value(s_chars) FILTER (measure = 'substring') AS source_chars,
    any_value(s_longest) FILTER (measure = 'substring') AS source_longest_chars,
    any_value(s_whole) FILTER (measure = 'substring') AS source_whole_count,
    any_value(s_row) FILTER (measure = 'substring') AS source_longest_row,
    any_value(s_offset) FILTER (measure = 'substring') AS source_longest_offset,
    any_value(s_words8) FILTER (measure = 'substring') AS source_words8_share,
    any_value(s_words13) FILTER (measure = 'substring') AS source_words13_share,
    any_value(t_chars) FILTER (measure = 'substring') AS target_chars,
    any_value(t_longest) FILTER (measure = 'substring') AS target_longest_chars,
    any_value(t_whole) FILTER (measure = 'substring') AS target_whole_count
FROM lens
GROUP BY test_corpus_id, train_corpus_id, seg_idx;
