-- tame-wh views of human judgments (docs/human.md): MQM weights applied, scores per segment, per
-- run, per exposure bin and per error category.
--
-- Each view and macro is defined here once; `tame-wh init` (and every command that upgrades the
-- warehouse) applies the files of sql/views/ in order, CREATE OR REPLACE, whenever the schema
-- version moves.

-- A category as the weights compare it: lower-case, a trailing "!" dropped (Google's releases
-- write "Non-translation!").
CREATE OR REPLACE MACRO mqm_category_key(category) AS rtrim(lower(trim(category)), '!');

-- Every error with its MQM weight: the (severity, category) row when there is one, else the
-- severity's.
CREATE OR REPLACE VIEW human_error_weights AS
SELECT
    e.*,
    coalesce(specific.weight, general.weight) AS weight
FROM human_errors e
LEFT JOIN mqm_weights specific
    ON specific.severity = lower(trim(e.severity))
    AND specific.category = mqm_category_key(e.category)
LEFT JOIN mqm_weights general
    ON general.severity = lower(trim(e.severity)) AND general.category = '';

-- One rater's verdict per run and segment. MQM: the summed weights of the rater's errors
-- (lower is better); ESA and DA: the rater's score, and DA's z-score against the rater's own mean
-- and standard deviation within the set.
CREATE OR REPLACE VIEW human_rater_scores AS
WITH mqm AS (
    SELECT set_id, run_id, seg_idx, rater, sum(weight) AS penalty, count(*) AS n_errors
    FROM human_error_weights
    WHERE lower(trim(severity)) <> 'no-error'
    GROUP BY ALL
),
raters AS (
    SELECT set_id, rater, avg(score) AS mean, stddev_samp(score) AS sd
    FROM human_judgments
    WHERE score IS NOT NULL
    GROUP BY ALL
)
SELECT
    j.set_id,
    s.scheme,
    j.run_id,
    j.seg_idx,
    j.rater,
    CASE WHEN s.scheme = 'mqm' THEN coalesce(m.penalty, 0) ELSE j.score END AS score,
    CASE WHEN s.scheme = 'da' AND r.sd > 0 THEN (j.score - r.mean) / r.sd END AS z,
    coalesce(m.n_errors, 0) AS n_errors
FROM human_judgments j
JOIN human_sets s USING (set_id)
LEFT JOIN mqm m USING (set_id, run_id, seg_idx, rater)
LEFT JOIN raters r USING (set_id, rater);

-- Per run and segment: the mean over raters. MQM scores are penalties (lower is better), ESA and
-- DA scores are 0-100 (higher is better).
CREATE OR REPLACE VIEW human_segment_scores AS
SELECT
    set_id,
    scheme,
    run_id,
    seg_idx,
    count(*) AS n_raters,
    avg(score) AS score,
    avg(z) AS z,
    sum(n_errors) AS n_errors
FROM human_rater_scores
GROUP BY ALL;

-- Per run: the mean over its judged segments, with the set's name and the run's identity.
CREATE OR REPLACE VIEW human_run_scores AS
SELECT
    g.set_id,
    s.name AS set_name,
    g.scheme,
    g.run_id,
    r.model_slug,
    r.condition,
    count(*) AS n_segments,
    avg(g.score) AS score,
    avg(g.z) AS z,
    sum(g.n_errors) AS n_errors,
    g.scheme = 'mqm' AS lower_is_better
FROM human_segment_scores g
JOIN human_sets s USING (set_id)
JOIN runs r USING (run_id)
GROUP BY ALL;

-- Each run's newest judgment set of each scheme: what the leaderboard's human columns, their
-- intervals and tie groups on a human score read.
CREATE OR REPLACE VIEW human_newest_sets AS
SELECT j.run_id, s.scheme, s.set_id
FROM (SELECT DISTINCT set_id, run_id FROM human_judgments) j
JOIN human_sets s USING (set_id)
QUALIFY row_number() OVER (
    PARTITION BY j.run_id, s.scheme ORDER BY s.added_at DESC, s.set_id) = 1;

-- Per run and exposure bin of each audit of its test set (the bins of docs/exposure.md).
CREATE OR REPLACE VIEW human_bin_scores AS
SELECT
    g.set_id,
    g.scheme,
    g.run_id,
    x.audit_id,
    x.bin,
    count(*) AS n_segments,
    avg(g.score) AS score,
    avg(g.z) AS z
FROM human_segment_scores g
JOIN runs r USING (run_id)
JOIN audits a ON a.test_corpus_id = r.test_corpus_id
JOIN exposures x ON x.audit_id = a.audit_id AND x.seg_idx = g.seg_idx
GROUP BY ALL;

-- Per run, error category and severity: how many errors, their summed weight, and the weight per
-- judged segment.
CREATE OR REPLACE VIEW human_error_categories AS
WITH judged AS (
    SELECT set_id, run_id, count(DISTINCT seg_idx) AS n_segments
    FROM human_judgments
    GROUP BY ALL
)
SELECT
    e.set_id,
    e.run_id,
    e.category,
    e.severity,
    count(*) AS n_errors,
    sum(e.weight) AS weight,
    sum(e.weight) / any_value(j.n_segments) AS weight_per_segment
FROM human_error_weights e
JOIN judged j USING (set_id, run_id)
WHERE lower(trim(e.severity)) <> 'no-error'
GROUP BY ALL;

-- Per judged run and segment: the human score (MQM as a penalty, DA as its z-score) beside the
-- segment's metric scores (sacrebleu's sentence chrF++; BLEU and TER as the corpus formulas on the
-- segment's statistics), for agreement queries in plain SQL (`tame-wh meta` computes the rest).
CREATE OR REPLACE VIEW human_segment_metrics AS
SELECT
    g.set_id,
    g.scheme,
    g.run_id,
    g.seg_idx,
    CASE WHEN g.scheme = 'da' THEN g.z ELSE g.score END AS human,
    st.chrf_sentence AS chrf_plus_plus,
    bleu_score(st.bleu_stats) AS bleu,
    ter_score(st.ter_stats) AS ter
FROM human_segment_scores g
JOIN segment_stats st USING (run_id, seg_idx);

-- System-level Pearson correlation of each surface metric with the human score, per judgment
-- set, both oriented so that higher is better (MQM and TER negated); all of each run's segments.
CREATE OR REPLACE VIEW human_system_pearson AS
WITH systems AS (
    SELECT
        h.set_id,
        CASE WHEN h.scheme = 'mqm' THEN -h.score WHEN h.scheme = 'da' THEN h.z ELSE h.score END
            AS human,
        s.bleu,
        s.chrf_plus_plus,
        -s.ter AS minus_ter
    FROM human_run_scores h
    JOIN run_surface s USING (run_id)
)
SELECT set_id, 'bleu' AS metric, count(*) AS n_systems, corr(bleu, human) AS pearson
FROM systems GROUP BY set_id
UNION ALL
SELECT set_id, 'chrf_plus_plus', count(*), corr(chrf_plus_plus, human) FROM systems GROUP BY set_id
UNION ALL
SELECT set_id, 'ter', count(*), corr(minus_ter, human) FROM systems GROUP BY set_id;
