-- tame-wh warehouse schema, version 4: translation-memory statistics and exposure summaries
-- (docs/exposure.md). A test segment's TM hypothesis is the target of its source nearest neighbour;
-- its statistics are stored at audit time, so TM scores per bin are sums like the system's.
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).


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
