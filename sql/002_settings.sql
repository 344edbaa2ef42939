-- tame-wh warehouse schema, version 2: thresholds, composite weights and language coverage as
-- data (docs/warehouse.md), so the views read them and users can change them with plain SQL.

-- Scalar thresholds.
CREATE TABLE settings (
    key         VARCHAR PRIMARY KEY,
    value       DOUBLE NOT NULL CHECK (isfinite(value)),
    description VARCHAR NOT NULL
);

INSERT INTO settings VALUES
    ('bin.near',            0.70, 'source exposure at or above which a non-exact segment is "near"'),
    ('bin.far',             0.30, 'source exposure below which a segment is "far" (else "medium")'),
    ('leak.low',            0.70, 'lowest PairLeak / exposure share threshold'),
    ('leak.mid',            0.85, 'middle PairLeak / exposure share threshold'),
    ('leak.high',           0.95, 'highest PairLeak / exposure share threshold'),
    ('warn.far_min_count',  30,   'warn when the far bin has fewer segments than this'),
    ('warn.far_min_share',  0.10, 'warn when the far bin holds a smaller share of the test set'),
    ('warn.pairleak_share', 0.05, 'warn when PairLeak@leak.mid reaches this share'),
    ('warn.tm_bleu_ratio',  0.50, 'warn when TM BLEU reaches this fraction of system BLEU'),
    ('bootstrap.n',         1000, 'bootstrap resamples for confidence intervals'),
    ('bootstrap.alpha',     0.05, 'significance level and CI width (1 - alpha)'),
    ('bootstrap.seed',      12345, 'default bootstrap seed');

-- Quality tiers, first match wins from the highest threshold down (docs/scores.md).
CREATE TABLE quality_tiers (
    tier          VARCHAR PRIMARY KEY,
    min_composite DOUBLE NOT NULL CHECK (min_composite BETWEEN 0 AND 1),
    rank          INTEGER NOT NULL UNIQUE
);

INSERT INTO quality_tiers VALUES
    ('fluent',     0.85, 1),
    ('deployable', 0.70, 2),
    ('functional', 0.50, 3),
    ('emerging',   0.30, 4),
    ('baseline',   0.00, 5);

-- Composite weights per profile (docs/scores.md). transform: how a metric maps to 0-1, 1 = best.
CREATE TABLE composite_weights (
    profile   VARCHAR NOT NULL CHECK (profile IN ('A', 'B')),
    metric    VARCHAR NOT NULL,
    weight    DOUBLE NOT NULL CHECK (weight > 0),
    transform VARCHAR NOT NULL CHECK (transform IN ('identity', 'percent', 'invert')),
    PRIMARY KEY (profile, metric)
);

INSERT INTO composite_weights VALUES
    ('A', 'fst_acceptance_rate',    0.25, 'identity'),
    ('A', 'morphological_accuracy', 0.15, 'identity'),
    ('A', 'chrf_plus_plus',         0.15, 'percent'),
    ('A', 'semantic_score',         0.15, 'identity'),
    ('A', 'equivalent_match_rate',  0.10, 'identity'),
    ('A', 'exact_match_rate',       0.05, 'identity'),
    ('A', 'code_switching_rate',    0.05, 'invert'),
    ('A', 'terminology_adherence',  0.05, 'identity'),
    ('A', 'hallucination_rate',     0.05, 'invert'),
    ('B', 'chrf_plus_plus',         0.25, 'percent'),
    ('B', 'semantic_score',         0.25, 'identity'),
    ('B', 'equivalent_match_rate',  0.15, 'identity'),
    ('B', 'exact_match_rate',       0.10, 'identity'),
    ('B', 'code_switching_rate',    0.10, 'invert'),
    ('B', 'terminology_adherence',  0.05, 'identity'),
    ('B', 'hallucination_rate',     0.05, 'invert'),
    ('B', 'orthographic_accuracy',  0.05, 'identity');

-- Target languages with a finite-state morphological analyser: their runs use profile A.
CREATE TABLE languages (
    lang    VARCHAR PRIMARY KEY,
    name    VARCHAR,
    has_fst BOOLEAN NOT NULL
);
