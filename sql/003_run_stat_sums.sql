-- tame-wh warehouse schema: per-run sums of the stored sufficient statistics, kept as tables.
-- A corpus score is its metric's formula applied to summed statistics (docs/metrics.md). Summing
-- millions of per-segment vectors on every leaderboard query is too slow, so the sums are written
-- when a run is ingested or an audit computed (sql/refresh_run_sums.sql,
-- sql/refresh_audit_sums.sql), in the same transaction, and the views read them.
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).


-- One row per run: summed statistics, exact-match counts, mean length ratio, latency summary.
CREATE TABLE run_sums (
    run_id                 VARCHAR PRIMARY KEY,
    n_segments             BIGINT NOT NULL,
    n_errors               BIGINT NOT NULL,
    bleu_stats             BIGINT[] NOT NULL,
    chrf_stats             BIGINT[] NOT NULL,
    ter_stats              DOUBLE[] NOT NULL,
    n_exact_evaluated      BIGINT NOT NULL,
    n_exact                BIGINT NOT NULL,
    length_ratio           DOUBLE,
    n_latencies            BIGINT NOT NULL,
    avg_latency_seconds    DOUBLE,
    median_latency_seconds DOUBLE,
    p95_latency_seconds    DOUBLE
);

-- One row per run x audit of its test set x bin ('all' plus the four exposure bins that occur):
-- system and TM statistics summed over the bin's segments.
CREATE TABLE run_bin_sums (
    run_id              VARCHAR NOT NULL,
    audit_id            VARCHAR NOT NULL,
    bin                 VARCHAR NOT NULL,
    n_segments          BIGINT NOT NULL,
    sum_source_exposure DOUBLE NOT NULL,
    bleu_stats          BIGINT[] NOT NULL,
    chrf_stats          BIGINT[] NOT NULL,
    tm_bleu_stats       BIGINT[] NOT NULL,
    tm_chrf_stats       BIGINT[] NOT NULL,
    PRIMARY KEY (run_id, audit_id, bin)
);
