-- tame-wh warehouse schema: bootstrap confidence intervals stored with each run
-- (docs/statistics.md), and the leaderboard carrying them.
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).


-- Percentile-method bootstrap intervals computed at ingest: per run and metric for the whole run
-- (scope 'all') and per difficulty tier (scope 'difficulty=K', difficulty K). The settings that
-- produced them (resamples, alpha, seed) are kept with every row.
CREATE TABLE run_intervals (
    run_id      VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,             -- chrf_plus_plus, bleu, exact_match_rate, composite, ...
    scope       VARCHAR NOT NULL,             -- 'all' or 'difficulty=K'
    difficulty  TINYINT CHECK (difficulty BETWEEN 1 AND 5),  -- NULL for the whole run
    estimate    DOUBLE NOT NULL,              -- the score on all segments of the scope
    ci_lower    DOUBLE NOT NULL,
    ci_upper    DOUBLE NOT NULL,
    n           BIGINT NOT NULL CHECK (n > 0),     -- segments in the scope
    n_bootstrap INTEGER NOT NULL CHECK (n_bootstrap > 0),
    alpha       DOUBLE NOT NULL CHECK (alpha > 0 AND alpha < 1),
    seed        BIGINT NOT NULL,
    PRIMARY KEY (run_id, metric, scope),
    CHECK ((scope = 'all' AND difficulty IS NULL)
           OR (scope = 'difficulty=' || CAST(difficulty AS VARCHAR)))
);
