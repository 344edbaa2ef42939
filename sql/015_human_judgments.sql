-- tame-wh warehouse schema, version 15: human judgments beside the metrics (docs/human.md).
--
-- A judgment set is one added annotation file (MQM, ESA or DA) on one test set; a judgment is one
-- rater's verdict on one run's hypothesis of one segment; an error is one annotated span of it.
-- Scores are computed by views (sql/views/05_human.sql) from these rows and the MQM weights
-- below, so that changing a weight with plain SQL changes every MQM score.

CREATE TABLE human_sets (
    set_id         VARCHAR PRIMARY KEY,        -- first 16 hex digits of sha256 (file, test set, map)
    name           VARCHAR NOT NULL,           -- the file's name, or --name
    test_corpus_id VARCHAR NOT NULL,
    scheme         VARCHAR NOT NULL CHECK (scheme IN ('mqm', 'esa', 'da')),
    format         VARCHAR NOT NULL,           -- mqm-tsv, jsonl
    sha256         VARCHAR NOT NULL,           -- of the file's bytes
    n_judgments    BIGINT NOT NULL CHECK (n_judgments > 0),
    n_errors       BIGINT NOT NULL CHECK (n_errors >= 0),
    added_at       TIMESTAMP NOT NULL,
    meta           JSON NOT NULL,              -- system map, skipped systems, file size
    UNIQUE (test_corpus_id, name)
);

CREATE TABLE human_judgments (
    set_id  VARCHAR NOT NULL,
    run_id  VARCHAR NOT NULL,
    seg_idx BIGINT NOT NULL,
    rater   VARCHAR NOT NULL,
    score   DOUBLE CHECK (isfinite(score)),    -- ESA and DA: the rater's score; MQM: NULL
    line    BIGINT NOT NULL,                   -- first line of the file that gave it
    PRIMARY KEY (set_id, run_id, seg_idx, rater)
);

CREATE TABLE human_errors (
    set_id      VARCHAR NOT NULL,
    run_id      VARCHAR NOT NULL,
    seg_idx     BIGINT NOT NULL,
    rater       VARCHAR NOT NULL,
    error_idx   INTEGER NOT NULL,              -- order within the judgment
    category    VARCHAR NOT NULL,
    severity    VARCHAR NOT NULL,
    span_start  INTEGER,                       -- characters into the hypothesis; NULL: no span
    span_end    INTEGER,
    source_span_start INTEGER,                 -- a span marked in the source instead
    source_span_end   INTEGER,
    comment     VARCHAR,
    line        BIGINT NOT NULL,
    PRIMARY KEY (set_id, run_id, seg_idx, rater, error_idx)
);

-- MQM weights per severity, and per severity and category where a category weighs differently
-- (the category compared lower-case, a trailing "!" dropped). A severity without a row is
-- refused when a file is added.
CREATE TABLE mqm_weights (
    severity    VARCHAR NOT NULL,              -- lower-case
    category    VARCHAR NOT NULL DEFAULT '',   -- lower-case; '' for every other category
    weight      DOUBLE NOT NULL CHECK (isfinite(weight) AND weight >= 0),
    description VARCHAR NOT NULL,
    PRIMARY KEY (severity, category)
);

INSERT INTO mqm_weights VALUES
    ('major',    '',                    5,   'a major error'),
    ('major',    'non-translation',     25,  'a major non-translation'),
    ('minor',    '',                    1,   'a minor error'),
    ('minor',    'fluency/punctuation', 0.1, 'a minor punctuation error'),
    ('neutral',  '',                    0,   'an annotation that costs nothing'),
    ('no-error', '',                    0,   'a segment annotated as having no error');
