-- tame-wh warehouse schema, version 1: the core tables (docs/warehouse.md).
-- Files in sql/ are applied in numeric order; each file raises the schema version by one.
-- Ids are content hashes computed by the warehouse package, so re-ingesting is a no-op.

CREATE TABLE schema_version (
    version         INTEGER PRIMARY KEY,
    applied_at      TIMESTAMP NOT NULL DEFAULT current_timestamp,
    tame_wh_version VARCHAR NOT NULL
);

-- Registered text collections: training corpora and test sets.
CREATE TABLE corpora (
    corpus_id  VARCHAR PRIMARY KEY,           -- first 16 hex digits of sha256
    name       VARCHAR NOT NULL UNIQUE,
    role       VARCHAR NOT NULL CHECK (role IN ('train', 'test')),
    src_lang   VARCHAR,
    tgt_lang   VARCHAR,
    n_segments BIGINT NOT NULL CHECK (n_segments > 0),
    n_refs     INTEGER NOT NULL CHECK (n_refs >= 1),
    source_chars BIGINT NOT NULL,             -- characters (code points) over all sources
    sha256     VARCHAR NOT NULL,              -- full content hash (text, languages, segment metadata)
    added_at   TIMESTAMP NOT NULL,
    meta       JSON NOT NULL                   -- source file names and sizes, loader version
);

-- One row per line of a corpus. Training corpora have exactly one reference (the target side).
CREATE TABLE segments (
    corpus_id  VARCHAR NOT NULL,
    seg_idx    BIGINT NOT NULL,               -- 0-based line number
    seg_key    VARCHAR NOT NULL,              -- external id, else the line number
    src        VARCHAR NOT NULL,
    refs       VARCHAR[] NOT NULL,
    difficulty TINYINT CHECK (difficulty BETWEEN 1 AND 5),
    provenance VARCHAR,
    meta       JSON,
    PRIMARY KEY (corpus_id, seg_idx)
);

-- One row per (test corpus, training corpus, retrieval configuration).
CREATE TABLE audits (
    audit_id        VARCHAR PRIMARY KEY,
    test_corpus_id  VARCHAR NOT NULL,
    train_corpus_id VARCHAR NOT NULL,
    mode            VARCHAR NOT NULL CHECK (mode IN ('exact', 'fast')),
    near_threshold  DOUBLE NOT NULL CHECK (near_threshold BETWEEN 0 AND 1),
    far_threshold   DOUBLE NOT NULL CHECK (far_threshold BETWEEN 0 AND near_threshold),
    leak_thresholds DOUBLE[] NOT NULL,            -- the "≥ t" share thresholds, ascending
    n_segments      BIGINT NOT NULL,
    config          JSON NOT NULL,
    signature       VARCHAR NOT NULL,
    backend         VARCHAR NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    timings         JSON,
    validation      JSON                      -- fast mode: agreement with exact on a sample
);

-- Per audit and test segment: exposure to the training corpus (docs/exposure.md).
CREATE TABLE exposures (
    audit_id        VARCHAR NOT NULL,
    seg_idx         BIGINT NOT NULL,
    source_exposure DOUBLE NOT NULL,
    source_nn       BIGINT,                   -- lowest training index attaining the maximum
    source_exact    BOOLEAN NOT NULL,
    target_exposure DOUBLE NOT NULL,
    target_nn       BIGINT,
    target_ref_idx  INTEGER,                  -- which reference attained the target maximum
    target_exact    BOOLEAN NOT NULL,
    pair_exposure   DOUBLE NOT NULL,
    pair_nn         BIGINT,
    pair_exact      BOOLEAN NOT NULL,
    tm_hyp_idx      BIGINT,                   -- training row whose target is the TM hypothesis
    bin             VARCHAR NOT NULL CHECK (bin IN ('source_exact', 'near', 'medium', 'far')),
    PRIMARY KEY (audit_id, seg_idx)
);

-- One row per evaluated system output (a run card).
CREATE TABLE runs (
    run_id            VARCHAR PRIMARY KEY,    -- fingerprint of test set, hypotheses, model, condition, settings
    test_corpus_id    VARCHAR NOT NULL,
    model_slug        VARCHAR NOT NULL,
    condition         VARCHAR,
    created_at        TIMESTAMP NOT NULL,
    ingested_at       TIMESTAMP NOT NULL,
    elapsed_seconds   DOUBLE CHECK (elapsed_seconds >= 0),
    n_entries         BIGINT NOT NULL CHECK (n_entries >= 0),
    prompt_tokens     BIGINT CHECK (prompt_tokens >= 0),
    completion_tokens BIGINT CHECK (completion_tokens >= 0),
    reasoning_tokens  BIGINT CHECK (reasoning_tokens >= 0),
    cached_tokens     BIGINT CHECK (cached_tokens >= 0),
    total_cost_usd    DOUBLE CHECK (total_cost_usd >= 0),
    dataset_id        VARCHAR,
    language_pair     VARCHAR,
    fingerprint_hash  VARCHAR,
    ci                JSON,                   -- commit, branch, job id and url when ingested from CI
    metric_settings   JSON,                   -- sacrebleu signatures of the stored statistics
    run_card          JSON NOT NULL           -- the full run card as received, unknown fields kept
);

-- One row per entry of a run.
CREATE TABLE hypotheses (
    run_id            VARCHAR NOT NULL,
    seg_idx           BIGINT NOT NULL,
    hyp               VARCHAR NOT NULL,
    latency_s         DOUBLE CHECK (latency_s >= 0),
    error             VARCHAR,                -- non-NULL: the entry errored and is excluded from metrics
    prompt_tokens     BIGINT CHECK (prompt_tokens >= 0),
    completion_tokens BIGINT CHECK (completion_tokens >= 0),
    reasoning_tokens  BIGINT CHECK (reasoning_tokens >= 0),
    cached_tokens     BIGINT CHECK (cached_tokens >= 0),
    PRIMARY KEY (run_id, seg_idx)
);

-- Per entry: sacrebleu's sufficient statistics, so any corpus score is a sum (docs/metrics.md).
CREATE TABLE segment_stats (
    run_id         VARCHAR NOT NULL,
    seg_idx        BIGINT NOT NULL,
    bleu_stats     BIGINT[],                  -- hyp_len, ref_len, correct[1..4], total[1..4]
    chrf_stats     BIGINT[],                  -- chrF++: per order hyp, ref, match counts
    ter_stats      DOUBLE[],                  -- edits, reference length
    exact_match    BOOLEAN,
    length_ratio   DOUBLE,
    chrf_sentence  DOUBLE,
    PRIMARY KEY (run_id, seg_idx)
);

CREATE SEQUENCE metric_value_seq START 1;

-- Every other metric, per entry (seg_idx) or per run (seg_idx NULL). Absent means NULL, never 0.
CREATE TABLE metric_values (
    metric_value_id BIGINT PRIMARY KEY DEFAULT nextval('metric_value_seq'),
    run_id          VARCHAR NOT NULL,
    seg_idx         BIGINT,
    metric          VARCHAR NOT NULL,
    value           DOUBLE NOT NULL CHECK (isfinite(value)),
    UNIQUE (run_id, seg_idx, metric)
);
