-- tame-wh warehouse schema, version 16: a plausibility threshold against the TM baseline (below),
-- and tie groups stored (`leaderboard --clusters --store`), so
-- that the leaderboard view, `query`, the report, the dashboard and the Supabase sync read them
-- (docs/statistics.md, "Tie groups"). One row per run of a board: a board is the runs of one test
-- set tested pair by pair on one metric with one method and correction; `runs_sha256` (of the
-- board's run ids, sorted, joined by commas) tells whether the test set still holds exactly
-- those runs. Its views have their one definition in sql/views/.

CREATE TABLE run_clusters (
    test_corpus_id VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    method         VARCHAR NOT NULL,
    correction     VARCHAR NOT NULL,
    signature      VARCHAR NOT NULL,           -- the metric's signature(s) on the board's runs
    run_id         VARCHAR NOT NULL,
    score          DOUBLE,
    cluster        INTEGER NOT NULL CHECK (cluster >= 1),
    best_rank      INTEGER NOT NULL CHECK (best_rank >= 1),
    worst_rank     INTEGER NOT NULL CHECK (worst_rank >= best_rank),
    n_runs         INTEGER NOT NULL CHECK (n_runs >= 2),
    runs_sha256    VARCHAR NOT NULL,
    n_bootstrap    INTEGER NOT NULL,
    alpha          DOUBLE NOT NULL,
    seed           BIGINT NOT NULL,
    computed_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (test_corpus_id, metric, method, correction, signature, run_id)
);

-- A run far below the translation-memory baseline is more likely misaligned, in the wrong
-- language, or truncated than a weak system: ingest warns (docs/inputs.md, "Plausibility").
INSERT INTO settings VALUES
    ('warn.below_tm_ratio', 0.50, 'warn at ingest when chrF++ is below this fraction of the TM baseline''s');
