-- tame-wh warehouse schema, version 10: run tags and stored ingest warnings; TER may be absent;
-- the leaderboard names the training corpus its exposure columns refer to, by a stated rule.
--
-- Its views and macros have their one current definition in sql/views/ (re-applied whenever the
-- schema version moves).


-- Free-form labels on runs (`tame-wh runs tag RUN KEY=VALUE`), one value per key and run.
CREATE TABLE run_tags (
    run_id  VARCHAR NOT NULL,
    key     VARCHAR NOT NULL,
    value   VARCHAR NOT NULL,
    PRIMARY KEY (run_id, key)
);

-- Warnings found while a run was ingested (wrong-but-plausible input), shown by `report`.
CREATE TABLE run_warnings (
    run_id   VARCHAR NOT NULL,
    seq      INTEGER NOT NULL,
    message  VARCHAR NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- Warnings about an audit's input found before it ran (e.g. a reversed language direction).
ALTER TABLE audits ADD COLUMN input_warnings VARCHAR[];
