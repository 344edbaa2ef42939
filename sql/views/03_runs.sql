-- tame-wh views per run: identity and sums, surface metrics, ingested metrics, composite and
-- tier, cost and speed (docs/scores.md).
--
-- Each view and macro is defined here once; `tame-wh init` (and every command that upgrades the
-- warehouse) applies the files of sql/views/ in order, CREATE OR REPLACE, whenever the schema
-- version moves.

-- The runs as ingested: every run but those `tame-wh rescore` derived from a stored one (boards,
-- baselines and replicate groups list these; a re-scored run is named by its id).
CREATE OR REPLACE VIEW ingested_runs AS
SELECT * FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rescores);

-- One row per run: identity, test set, counts and summed statistics (what `runs list` reads).
CREATE OR REPLACE VIEW run_summaries AS
SELECT
    r.run_id,
    r.model_slug,
    r.condition,
    c.name AS test_set,
    r.test_corpus_id,
    r.n_entries,
    coalesce(s.n_errors, 0) AS n_errors,
    r.created_at,
    r.ingested_at,
    s.bleu_stats,
    s.chrf_stats,
    s.ter_stats,
    s.n_exact / nullif(s.n_exact_evaluated, 0) AS exact_match_rate,
    s.length_ratio,
    rs.source_run_id AS rescored_from
FROM runs r
JOIN corpora c ON c.corpus_id = r.test_corpus_id
LEFT JOIN run_sums s USING (run_id)
LEFT JOIN run_rescores rs USING (run_id);

-- Corpus BLEU, chrF++, TER (sacrebleu scale 0-100), exact match rate and mean length ratio, as
-- stored with the sums (the score macros of the summed statistics, computed when they are written).
CREATE OR REPLACE VIEW run_surface AS
SELECT
    run_id,
    n_segments,
    bleu,
    chrf_plus_plus,
    ter,
    n_exact / nullif(n_exact_evaluated, 0) AS exact_match_rate,
    length_ratio
FROM run_sums;

-- Every ingested metric per run: the run-level value when the run card gave one, else the mean
-- of the per-entry values (absent metrics have no row: NULL, never 0). One pass over
-- `metric_values`: (run_id, seg_idx, metric) is unique.
CREATE OR REPLACE VIEW run_metric_values AS
SELECT
    run_id,
    metric,
    CASE WHEN count(*) FILTER (WHERE seg_idx IS NULL) > 0
         THEN any_value(value) FILTER (WHERE seg_idx IS NULL)
         ELSE avg(value) END AS value,
    CASE WHEN count(*) FILTER (WHERE seg_idx IS NULL) > 0 THEN 'run' ELSE 'entries' END AS source
FROM metric_values
GROUP BY run_id, metric;

-- ---------------------------------------------------------------------------------------------
-- Composite and tier (docs/scores.md).

-- Profile A when the target language is marked in `languages` as having an FST; for languages
-- not in that table, when the run has an FST acceptance rate; otherwise B.
CREATE OR REPLACE VIEW run_profiles AS
SELECT
    r.run_id,
    coalesce(c.tgt_lang, split_part(r.language_pair, '-', 2)) AS tgt_lang,
    CASE
        WHEN l.has_fst IS NOT NULL THEN (CASE WHEN l.has_fst THEN 'A' ELSE 'B' END)
        WHEN EXISTS (SELECT 1 FROM run_metric_values m
                     WHERE m.run_id = r.run_id AND m.metric = 'fst_acceptance_rate') THEN 'A'
        ELSE 'B'
    END AS profile
FROM runs r
JOIN corpora c ON c.corpus_id = r.test_corpus_id
LEFT JOIN languages l
    ON l.lang = coalesce(c.tgt_lang, nullif(split_part(r.language_pair, '-', 2), ''));

-- The composite inputs on 0-1 (1 = best): chrF++ / 100, rates inverted where lower is better;
-- each with its transform and where its value comes from: 'surface' (chrF++ and exact match, from
-- the stored statistics), 'entries' (the mean of per-entry values) or 'run' (a run-level value).
CREATE OR REPLACE VIEW run_composite_inputs AS
WITH surface AS (
    SELECT run_id, unnest([{'metric': 'chrf_plus_plus', 'value': chrf_plus_plus},
                           {'metric': 'exact_match_rate', 'value': exact_match_rate}]) AS m
    FROM run_surface
),
values_ AS (
    SELECT run_id, metric, value, source FROM run_metric_values
    UNION ALL
    SELECT run_id, m.metric, m.value, 'surface' FROM surface
    WHERE m.metric = 'chrf_plus_plus' OR m.value IS NOT NULL
)
SELECT
    p.run_id,
    p.profile,
    w.metric,
    w.weight,
    CASE w.transform
        WHEN 'percent' THEN v.value / 100
        WHEN 'invert' THEN 1 - v.value
        ELSE v.value
    END AS value,
    w.transform,
    v.source
FROM run_profiles p
JOIN composite_weights w ON w.profile = p.profile
LEFT JOIN values_ v ON v.run_id = p.run_id AND v.metric = w.metric;

-- Composite = sum(w * v) / sum(w) over the profile's metrics that are present, added in metric
-- order (a file and a lake scan rows in different orders; the sum is the same to the last bit);
-- the effective weights say how the missing metrics' weight was redistributed. No usable
-- metric -> NULL.
CREATE OR REPLACE VIEW run_composite AS
SELECT
    run_id,
    any_value(profile) AS profile,
    sum(weight * value ORDER BY metric) FILTER (WHERE value IS NOT NULL)
        / sum(weight ORDER BY metric) FILTER (WHERE value IS NOT NULL) AS composite,
    list(metric ORDER BY metric) FILTER (WHERE value IS NOT NULL) AS metrics_used,
    list(metric ORDER BY metric) FILTER (WHERE value IS NULL) AS metrics_missing,
    list({'metric': metric, 'value': value, 'weight': weight, 'transform': transform,
          'source': source} ORDER BY metric)
        FILTER (WHERE value IS NOT NULL) AS inputs
FROM run_composite_inputs
GROUP BY run_id;

-- What the composite of a run is made of: the present inputs. The composite interval resamples
-- the 'surface' and 'entries' ones and holds 'run' values fixed.
CREATE OR REPLACE VIEW run_composite_sources AS
SELECT run_id, metric, weight, transform, value, source
FROM run_composite_inputs
WHERE value IS NOT NULL;

-- First tier whose threshold the composite reaches (thresholds inclusive); NULL -> unscored.
CREATE OR REPLACE MACRO quality_tier(composite) AS
    CASE
        WHEN composite IS NULL THEN 'unscored'
        ELSE coalesce(
            (SELECT t.tier FROM quality_tiers t WHERE composite >= t.min_composite
             ORDER BY t.min_composite DESC LIMIT 1),
            'baseline')
    END;

CREATE OR REPLACE VIEW run_tiers AS
SELECT run_id, composite, quality_tier(composite) AS quality_tier
FROM run_composite;

-- ---------------------------------------------------------------------------------------------
-- Cost and speed (docs/scores.md).

-- Tokens of a run: prompt plus completion, NULL when the run card gave neither.
CREATE OR REPLACE MACRO total_tokens(prompt_tokens, completion_tokens) AS
    CASE WHEN prompt_tokens IS NULL AND completion_tokens IS NULL THEN NULL
         ELSE coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0)
    END;

-- Composite per log2 of the cost of 1,000 entries; NULL for a free run or an unknown cost.
CREATE OR REPLACE MACRO cost_adjusted(composite, total_cost_usd, n_entries) AS
    CASE WHEN total_cost_usd > 0 AND n_entries > 0
         THEN composite / log2(1 + total_cost_usd / n_entries * 1000)
    END;

-- Every cost figure of a run but the cost-adjusted composite (`run_cost` adds it; the
-- leaderboard, which joins the composite once, computes it from there).
CREATE OR REPLACE VIEW run_cost_figures AS
WITH base AS (
    SELECT
        r.run_id,
        r.n_entries,
        r.prompt_tokens,
        r.completion_tokens,
        r.reasoning_tokens,
        r.cached_tokens,
        total_tokens(r.prompt_tokens, r.completion_tokens) AS total_tokens,
        r.total_cost_usd,
        c.source_chars
    FROM runs r
    LEFT JOIN corpora c ON c.corpus_id = r.test_corpus_id
)
SELECT
    b.*,
    b.total_tokens / nullif(b.n_entries, 0) AS tokens_per_entry,
    b.total_cost_usd / nullif(b.n_entries, 0) AS cost_per_entry_usd,
    b.total_cost_usd / nullif(b.total_tokens, 0) * 1000 AS cost_per_1k_tokens,
    b.total_cost_usd / nullif(b.source_chars, 0) AS cost_per_source_char
FROM base b;

CREATE OR REPLACE VIEW run_cost AS
SELECT f.*, cost_adjusted(c.composite, f.total_cost_usd, f.n_entries) AS cost_adjusted
FROM run_cost_figures f
LEFT JOIN run_composite c USING (run_id);

CREATE OR REPLACE VIEW run_speed AS
SELECT
    r.run_id,
    r.elapsed_seconds,
    s.avg_latency_seconds,
    s.median_latency_seconds,
    s.p95_latency_seconds,
    coalesce(s.n_latencies, 0) AS n_latencies,
    total_tokens(r.prompt_tokens, r.completion_tokens) / nullif(r.elapsed_seconds, 0)
        AS tokens_per_second,
    r.n_entries / nullif(r.elapsed_seconds / 60, 0) AS entries_per_minute
FROM runs r
LEFT JOIN run_sums s USING (run_id);

-- ---------------------------------------------------------------------------------------------
-- Breakdowns (docs/scores.md): by difficulty and by provenance.

CREATE OR REPLACE VIEW run_breakdowns AS
WITH seg AS (
    SELECT st.*, s.difficulty, s.provenance
    FROM segment_stats st
    JOIN runs r USING (run_id)
    JOIN segments s ON s.corpus_id = r.test_corpus_id AND s.seg_idx = st.seg_idx
),
grouped AS (
    SELECT run_id, 'difficulty' AS dimension, CAST(difficulty AS VARCHAR) AS value,
           count(*) AS n_segments, bleu_stats_sum(bleu_stats) AS b, chrf_stats_sum(chrf_stats) AS c,
           ter_stats_sum(ter_stats) AS t, avg(exact_match::DOUBLE) AS exact_match_rate
    FROM seg GROUP BY run_id, difficulty
    UNION ALL
    SELECT run_id, 'provenance', provenance, count(*), bleu_stats_sum(bleu_stats),
           chrf_stats_sum(chrf_stats), ter_stats_sum(ter_stats), avg(exact_match::DOUBLE)
    FROM seg GROUP BY run_id, provenance
)
SELECT run_id, dimension, value, n_segments, bleu_score(b) AS bleu,
       chrf_score(c) AS chrf_plus_plus, ter_score(t) AS ter, exact_match_rate
FROM grouped;
