-- tame-wh warehouse schema, version 20: audits of one side (docs/exposure.md, "Sides").
--
-- `audit --side source|target|both` searches the test sources, the references, or both (the
-- side lives in `audits.config`; only a one-sided audit names it). A side not searched is NULL in
-- `exposures`, and so is the pair side of a one-sided audit. The bins follow the source side,
-- except in an audit of the target side alone: there they follow the references' exposure, and a
-- reference found verbatim falls in the bin `target_exact`. `run_bin_sums` sums each side's
-- exposure per bin (NULL when not searched), and an audit without a TM baseline (the target side
-- alone has no source neighbour) has no TM statistics.
--
-- Both tables are rebuilt (a CHECK cannot be altered); their rows are kept, and the new
-- `sum_target_exposure` is computed from the stored exposures.

CREATE TABLE exposures_v20 (
    audit_id        VARCHAR NOT NULL,
    seg_idx         BIGINT NOT NULL,
    source_exposure DOUBLE,                   -- NULL: the source side was not searched
    source_nn       BIGINT,                   -- lowest training index attaining the maximum
    source_exact    BOOLEAN,
    target_exposure DOUBLE,                   -- NULL: the target side was not searched
    target_nn       BIGINT,
    target_ref_idx  INTEGER,                  -- which reference attained the target maximum
    target_exact    BOOLEAN,
    pair_exposure   DOUBLE,                   -- NULL unless both sides were searched
    pair_nn         BIGINT,
    pair_exact      BOOLEAN,
    tm_hyp_idx      BIGINT,                   -- training row whose target is the TM hypothesis
    bin             VARCHAR NOT NULL
        CHECK (bin IN ('source_exact', 'target_exact', 'near', 'medium', 'far')),
    PRIMARY KEY (audit_id, seg_idx)
);

INSERT INTO exposures_v20 SELECT * FROM exposures ORDER BY audit_id, seg_idx;

DROP TABLE exposures;

ALTER TABLE exposures_v20 RENAME TO exposures;

CREATE TABLE run_bin_sums_v20 (
    run_id              VARCHAR NOT NULL,
    audit_id            VARCHAR NOT NULL,
    bin                 VARCHAR NOT NULL,
    n_segments          BIGINT NOT NULL,
    sum_source_exposure DOUBLE,               -- NULL: the source side was not searched
    sum_target_exposure DOUBLE,               -- NULL: the target side was not searched
    bleu_stats          BIGINT[] NOT NULL,
    chrf_stats          BIGINT[] NOT NULL,
    tm_bleu_stats       BIGINT[],             -- NULL: the audit has no TM baseline
    tm_chrf_stats       BIGINT[],
    PRIMARY KEY (run_id, audit_id, bin)
);

INSERT INTO run_bin_sums_v20
SELECT s.run_id, s.audit_id, s.bin, s.n_segments, s.sum_source_exposure, t.sum_target_exposure,
       s.bleu_stats, s.chrf_stats, s.tm_bleu_stats, s.tm_chrf_stats
FROM run_bin_sums s
LEFT JOIN (
    SELECT st.run_id, e.audit_id, coalesce(e.bin, 'all') AS bin,
           sum(e.target_exposure ORDER BY e.seg_idx) AS sum_target_exposure
    FROM exposures e
    JOIN audits a ON a.audit_id = e.audit_id
    JOIN runs r ON r.test_corpus_id = a.test_corpus_id
    JOIN segment_stats st ON st.run_id = r.run_id AND st.seg_idx = e.seg_idx
    GROUP BY GROUPING SETS ((st.run_id, e.audit_id, e.bin), (st.run_id, e.audit_id))
) t ON t.run_id = s.run_id AND t.audit_id = s.audit_id AND t.bin = s.bin
ORDER BY s.run_id, s.audit_id, s.bin;

DROP TABLE run_bin_sums;

ALTER TABLE run_bin_sums_v20 RENAME TO run_bin_sums;
