-- tame-wh warehouse schema: bootstrap confidence intervals stored with each run
-- (docs/statistics.md), and the leaderboard carrying them.

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

-- What the composite of a run is made of, with where each input comes from: 'surface' (chrF++
-- and exact match, from the stored statistics), 'entries' (the mean of per-entry values) or 'run'
-- (a run-level value). The composite interval resamples the first two and holds 'run' fixed.
CREATE VIEW run_composite_sources AS
SELECT
    i.run_id,
    i.metric,
    i.weight,
    w.transform,
    i.value,
    CASE WHEN i.metric IN ('chrf_plus_plus', 'exact_match_rate') THEN 'surface'
         ELSE v.source END AS source
FROM run_composite_inputs i
JOIN composite_weights w ON w.profile = i.profile AND w.metric = i.metric
LEFT JOIN run_metric_values v ON v.run_id = i.run_id AND v.metric = i.metric
WHERE i.value IS NOT NULL;

-- The leaderboard: one row per run, each denormalised column of docs/supabase.md (what BI tools and
-- the Supabase sync read), including the whole-run intervals of chrF++, exact match, BLEU and the
-- composite and the bootstrap settings behind them (NULL for runs ingested with --no-ci).
-- Exposure columns come from the test set's most recent exact audit (a fast audit only when
-- there is no exact one).
CREATE VIEW leaderboard AS
WITH latest_exposure AS (
    SELECT * FROM run_exposure
    QUALIFY row_number() OVER (
        PARTITION BY run_id ORDER BY audit_mode = 'exact' DESC, audited_at DESC, audit_id) = 1
),
metric AS (
    SELECT run_id,
           max(value) FILTER (WHERE metric = 'fst_acceptance_rate') AS fst_acceptance_rate,
           max(value) FILTER (WHERE metric = 'comet_score') AS comet_score,
           max(value) FILTER (WHERE metric = 'equivalent_match_rate') AS equivalent_match_rate,
           max(value) FILTER (WHERE metric = 'semantic_score') AS semantic_score,
           max(value) FILTER (WHERE metric = 'code_switching_rate') AS code_switching_rate,
           max(value) FILTER (WHERE metric = 'hallucination_rate') AS hallucination_rate,
           max(value) FILTER (WHERE metric = 'terminology_adherence') AS terminology_adherence,
           list(metric ORDER BY metric) AS ingested_metrics
    FROM run_metric_values
    GROUP BY run_id
),
interval_ AS (
    SELECT run_id,
           max(ci_lower) FILTER (WHERE metric = 'chrf_plus_plus') AS chrf_ci_lower,
           max(ci_upper) FILTER (WHERE metric = 'chrf_plus_plus') AS chrf_ci_upper,
           max(ci_lower) FILTER (WHERE metric = 'exact_match_rate') AS exact_match_ci_lower,
           max(ci_upper) FILTER (WHERE metric = 'exact_match_rate') AS exact_match_ci_upper,
           max(ci_lower) FILTER (WHERE metric = 'bleu') AS bleu_ci_lower,
           max(ci_upper) FILTER (WHERE metric = 'bleu') AS bleu_ci_upper,
           max(ci_lower) FILTER (WHERE metric = 'composite') AS composite_ci_lower,
           max(ci_upper) FILTER (WHERE metric = 'composite') AS composite_ci_upper,
           max(n_bootstrap) AS ci_n_bootstrap,
           max(alpha) AS ci_alpha,
           max(seed) AS ci_seed
    FROM run_intervals
    WHERE scope = 'all'
    GROUP BY run_id
)
SELECT
    r.run_id,
    coalesce(r.fingerprint_hash, r.run_id) AS fingerprint_hash,
    r.model_slug,
    r.condition,
    coalesce(r.dataset_id, c.name) AS dataset_id,
    c.name AS test_set,
    r.test_corpus_id,
    coalesce(r.language_pair, c.src_lang || '-' || c.tgt_lang) AS language_pair,
    r.created_at,
    r.n_entries,
    comp.profile,
    comp.composite AS composite_score,
    t.quality_tier,
    comp.metrics_used AS composite_metrics,
    s.chrf_plus_plus,
    s.bleu AS corpus_bleu,
    s.ter,
    s.exact_match_rate,
    s.length_ratio,
    m.fst_acceptance_rate,
    m.comet_score,
    m.equivalent_match_rate,
    m.semantic_score,
    m.code_switching_rate,
    m.hallucination_rate,
    m.terminology_adherence,
    m.ingested_metrics,
    cost.total_tokens,
    cost.total_cost_usd,
    cost.cost_per_entry_usd,
    cost.cost_per_1k_tokens,
    cost.cost_per_source_char,
    cost.cost_adjusted,
    sp.elapsed_seconds,
    sp.avg_latency_seconds,
    sp.median_latency_seconds,
    sp.p95_latency_seconds,
    sp.tokens_per_second,
    sp.entries_per_minute,
    e.audit_id,
    e.tm_bleu,
    e.tm_chrf_plus_plus,
    e.delta_tm_bleu,
    e.delta_tm_chrf_plus_plus,
    e.gengap_bleu,
    e.gengap_chrf,
    e.tm_gengap_bleu,
    e.tm_gengap_chrf,
    e.pairleak_070,
    e.pairleak_085,
    e.pairleak_095,
    e.source_exact_share,
    e.near_share,
    e.medium_share,
    e.far_share,
    e.mean_source_exposure,
    iv.chrf_ci_lower,
    iv.chrf_ci_upper,
    iv.exact_match_ci_lower,
    iv.exact_match_ci_upper,
    iv.bleu_ci_lower,
    iv.bleu_ci_upper,
    iv.composite_ci_lower,
    iv.composite_ci_upper,
    iv.ci_n_bootstrap,
    iv.ci_alpha,
    iv.ci_seed
FROM runs r
JOIN corpora c ON c.corpus_id = r.test_corpus_id
LEFT JOIN run_surface s USING (run_id)
LEFT JOIN run_composite comp USING (run_id)
LEFT JOIN run_tiers t USING (run_id)
LEFT JOIN metric m USING (run_id)
LEFT JOIN run_cost cost USING (run_id)
LEFT JOIN run_speed sp USING (run_id)
LEFT JOIN latest_exposure e USING (run_id)
LEFT JOIN interval_ iv USING (run_id);
