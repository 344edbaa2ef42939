-- tame-wh leaderboard: one row per run with each denormalised column of docs/supabase.md (what
-- BI tools and the Supabase sync read), including the whole-run intervals and the bootstrap
-- settings behind them, against a chosen training corpus or each test set's default.
--
-- Each view and macro is defined here once; `tame-wh init` (and every command that upgrades the
-- warehouse) applies the files of sql/views/ in order, CREATE OR REPLACE, whenever the schema
-- version moves.

-- Stored tie groups whose board still holds exactly its test set's runs as ingested (boards
-- never hold a re-scored run beside its source); per run the newest.
CREATE OR REPLACE VIEW run_tie_groups AS
WITH current_runs AS (
    SELECT test_corpus_id, count(*) AS n_runs,
           sha256(string_agg(run_id, ',' ORDER BY run_id)) AS runs_sha256
    FROM ingested_runs
    GROUP BY test_corpus_id
)
SELECT c.*
FROM run_clusters c
JOIN current_runs USING (test_corpus_id, n_runs, runs_sha256)
QUALIFY row_number() OVER (
    PARTITION BY c.run_id ORDER BY c.computed_at DESC, c.metric, c.method, c.correction) = 1;

-- The leaderboard against one training corpus (by name), or with `wanted_train` NULL against
-- each test set's default: exposure columns come from an exact audit before a fast one, then
-- from the LARGEST training corpus audited for the test set, then the newest audit. The chosen
-- corpus is named in the `train_corpus` column (docs/exposure.md).
CREATE OR REPLACE MACRO leaderboard_by(wanted_train, wanted_measure) AS TABLE
WITH chosen_exposure AS (
    SELECT x.*, tr.name AS train_corpus
    FROM run_exposure x
    JOIN corpora tr ON tr.corpus_id = x.train_corpus_id
    WHERE (wanted_train IS NULL OR tr.name = wanted_train)
      AND (wanted_measure IS NULL OR x.audit_measure = wanted_measure)
    QUALIFY row_number() OVER (
        PARTITION BY x.run_id
        ORDER BY x.audit_mode = 'exact' DESC, measure_rank(x.audit_measure),
                 side_rank(x.audit_side), tr.n_segments DESC, x.audited_at DESC, x.audit_id) = 1
),
tag AS (
    SELECT run_id, map(list(key ORDER BY key), list(value ORDER BY key)) AS tags
    FROM run_tags
    GROUP BY run_id
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
),
-- Each run's human score of each scheme, from its newest judgment set of that scheme.
human AS (
    SELECT run_id,
           max(h.score) FILTER (WHERE h.scheme = 'mqm') AS human_mqm,
           max(h.score) FILTER (WHERE h.scheme = 'esa') AS human_esa,
           max(h.z) FILTER (WHERE h.scheme = 'da') AS human_da_z
    FROM human_newest_sets n
    JOIN human_run_scores h USING (run_id, scheme, set_id)
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
    quality_tier(comp.composite) AS quality_tier,
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
    cost_adjusted(comp.composite, cost.total_cost_usd, cost.n_entries) AS cost_adjusted,
    sp.elapsed_seconds,
    sp.avg_latency_seconds,
    sp.median_latency_seconds,
    sp.p95_latency_seconds,
    sp.tokens_per_second,
    sp.entries_per_minute,
    e.audit_id,
    e.audit_measure,
    e.train_corpus,
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
    iv.ci_seed,
    hu.human_mqm,
    hu.human_esa,
    hu.human_da_z,
    tie.metric AS tie_metric,
    tie.method AS tie_method,
    tie.correction AS tie_correction,
    tie.cluster AS tie_cluster,
    tie.best_rank AS tie_best_rank,
    tie.worst_rank AS tie_worst_rank,
    tie.n_runs AS tie_n_runs,
    coalesce(tg.tags, MAP {}::MAP(VARCHAR, VARCHAR)) AS tags,
    rs.source_run_id AS rescored_from
FROM runs r
JOIN corpora c ON c.corpus_id = r.test_corpus_id
LEFT JOIN run_surface s USING (run_id)
LEFT JOIN run_composite comp USING (run_id)
LEFT JOIN metric m USING (run_id)
LEFT JOIN run_cost_figures cost USING (run_id)
LEFT JOIN run_speed sp USING (run_id)
LEFT JOIN chosen_exposure e USING (run_id)
LEFT JOIN interval_ iv USING (run_id)
LEFT JOIN human hu USING (run_id)
LEFT JOIN run_tie_groups tie USING (run_id)
LEFT JOIN tag tg USING (run_id)
LEFT JOIN run_rescores rs USING (run_id);

-- The leaderboard with the exposure columns of any audit against `wanted_train` (NULL: each test
-- set's default corpus), of every measure (`leaderboard_by` with NULL: Jaccard first).
CREATE OR REPLACE MACRO leaderboard_for(wanted_train) AS TABLE
SELECT * FROM leaderboard_by(wanted_train, NULL);

-- The leaderboard of the runs as ingested, with each test set's default training corpus (what
-- sync and BI tools read; `leaderboard_for` also lists the runs `tame-wh rescore` derived).
CREATE OR REPLACE VIEW leaderboard AS SELECT * FROM leaderboard_for(NULL) WHERE rescored_from IS NULL;
