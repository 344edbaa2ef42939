-- tame-wh warehouse schema, version 4: translation-memory statistics and exposure summaries
-- (docs/exposure.md). A test segment's TM hypothesis is the target of its source nearest neighbour;
-- its statistics are stored at audit time, so TM scores per bin are sums like the system's.

CREATE TABLE tm_segment_stats (
    audit_id      VARCHAR NOT NULL,
    seg_idx       BIGINT NOT NULL,
    bleu_stats    BIGINT[] NOT NULL,
    chrf_stats    BIGINT[] NOT NULL,
    ter_stats     DOUBLE[],                   -- not computed for TM hypotheses (NULL)
    exact_match   BOOLEAN,
    length_ratio  DOUBLE,
    chrf_sentence DOUBLE,
    PRIMARY KEY (audit_id, seg_idx)
);

-- Per audit and side (source, target, pair): distribution of exposure, exact share and the
-- shares at or above the audit's three thresholds (for the pair side: PairLeak@t).
CREATE VIEW audit_exposure_summary AS
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
GROUP BY s.audit_id, s.side, s.side_order, a.leak_thresholds;

-- Per audit and bin (every bin listed, empty ones with 0): count, share, mean source exposure.
CREATE VIEW audit_bins AS
WITH bins(bin, bin_order) AS (
    VALUES ('source_exact', 1), ('near', 2), ('medium', 3), ('far', 4)
)
SELECT
    a.audit_id,
    b.bin,
    b.bin_order,
    count(e.seg_idx) AS n_segments,
    count(e.seg_idx) / a.n_segments AS share,
    avg(e.source_exposure) AS mean_source_exposure
FROM audits a
CROSS JOIN bins b
LEFT JOIN exposures e ON e.audit_id = a.audit_id AND e.bin = b.bin
GROUP BY a.audit_id, b.bin, b.bin_order, a.n_segments;
