-- tame-wh warehouse schema, version 5: corpus metrics as SQL macros and the analytics views
-- (bins and GenGap: docs/exposure.md; surface metrics: docs/metrics.md; composite, tiers, cost,
-- speed, breakdowns: docs/scores.md).
--
-- Surface metrics are macros over summed sufficient statistics, so any GROUP BY yields corpus
-- scores in plain SQL:
--     SELECT provenance, corpus_bleu(bleu_stats), corpus_chrf(chrf_stats)
--     FROM segment_stats JOIN runs USING (run_id) JOIN segments ... GROUP BY provenance;
-- The `*_stats_sum` macros sum element by element ([sum(s[1]), ..., sum(s[k])]), which DuckDB
-- runs far faster than list lambdas. The formulas repeat sacrebleu's operations in sacrebleu's
-- order, so the results equal `corpus_score` (to the last bit in practice; tested to 1e-9).

-- Element-wise sums (aggregate macros).

CREATE MACRO bleu_stats_sum(s) AS [
        sum(s[1]), sum(s[2]), sum(s[3]), sum(s[4]), sum(s[5]), sum(s[6]), sum(s[7]), sum(s[8]),
        sum(s[9]), sum(s[10])
];
CREATE MACRO chrf_stats_sum(s) AS [
        sum(s[1]), sum(s[2]), sum(s[3]), sum(s[4]), sum(s[5]), sum(s[6]), sum(s[7]), sum(s[8]),
        sum(s[9]), sum(s[10]), sum(s[11]), sum(s[12]), sum(s[13]), sum(s[14]), sum(s[15]),
        sum(s[16]), sum(s[17]), sum(s[18]), sum(s[19]), sum(s[20]), sum(s[21]), sum(s[22]),
        sum(s[23]), sum(s[24])
];
CREATE MACRO ter_stats_sum(s) AS [
        sum(s[1]), sum(s[2])
];

-- BLEU (sacrebleu: 13a tokens already counted, exp smoothing, 4-gram, no effective order) from
-- summed [hyp_len, ref_len, correct_1..4, total_1..4]. Precisions: 100*c/t; an order with no
-- match but some n-grams gets 100/(2^k * t), k counting such orders so far; no n-grams -> 0,
-- whose log is floored at -9999999999 as in sacrebleu.
CREATE MACRO _bleu_precision(c, t, k) AS
    CASE WHEN t = 0 THEN 0.0
         WHEN c = 0 THEN 100.0 / (pow(2, k) * t::DOUBLE)
         ELSE (100.0 * c::DOUBLE) / t::DOUBLE END;

CREATE MACRO _floored_log(p) AS CASE WHEN p = 0 THEN -9999999999 ELSE ln(p) END;

CREATE MACRO _bleu_missing(c, t) AS (t > 0 AND c = 0)::INTEGER;

CREATE MACRO bleu_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN s[3] = 0 AND s[4] = 0 AND s[5] = 0 AND s[6] = 0 THEN 0.0
        ELSE
            (CASE WHEN s[1] < s[2] THEN
                  (CASE WHEN s[1] > 0 THEN exp(1 - s[2]::DOUBLE / s[1]::DOUBLE) ELSE 0.0 END)
             ELSE 1.0 END)
            * exp((
                _floored_log(_bleu_precision(s[3], s[7], _bleu_missing(s[3], s[7])))
                + _floored_log(_bleu_precision(s[4], s[8],
                      _bleu_missing(s[3], s[7]) + _bleu_missing(s[4], s[8])))
                + _floored_log(_bleu_precision(s[5], s[9],
                      _bleu_missing(s[3], s[7]) + _bleu_missing(s[4], s[8])
                      + _bleu_missing(s[5], s[9])))
                + _floored_log(_bleu_precision(s[6], s[10],
                      _bleu_missing(s[3], s[7]) + _bleu_missing(s[4], s[8])
                      + _bleu_missing(s[5], s[9]) + _bleu_missing(s[6], s[10])))
              ) / 4)
    END;

-- chrF++ (6 character + 2 word orders, beta 2) from summed [hyp, ref, match] per order:
-- average precision and recall over the orders where both sides have n-grams, then F-beta.
CREATE MACRO _chrf_from_averages(p, r) AS
    CASE WHEN p + r > 0 THEN 100 * (((1 + 4) * p * r) / ((4 * p) + r)) ELSE 0.0 END;

CREATE MACRO _chrf_effective_order(s) AS
        (s[1] > 0 AND s[2] > 0)::INTEGER
        + (s[4] > 0 AND s[5] > 0)::INTEGER
        + (s[7] > 0 AND s[8] > 0)::INTEGER
        + (s[10] > 0 AND s[11] > 0)::INTEGER
        + (s[13] > 0 AND s[14] > 0)::INTEGER
        + (s[16] > 0 AND s[17] > 0)::INTEGER
        + (s[19] > 0 AND s[20] > 0)::INTEGER
        + (s[22] > 0 AND s[23] > 0)::INTEGER;

CREATE MACRO chrf_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN _chrf_effective_order(s) = 0 THEN 0.0
        ELSE _chrf_from_averages(
            (
            CASE WHEN s[1] > 0 AND s[2] > 0 THEN s[3]::DOUBLE / s[1]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[4] > 0 AND s[5] > 0 THEN s[6]::DOUBLE / s[4]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[7] > 0 AND s[8] > 0 THEN s[9]::DOUBLE / s[7]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[10] > 0 AND s[11] > 0 THEN s[12]::DOUBLE / s[10]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[13] > 0 AND s[14] > 0 THEN s[15]::DOUBLE / s[13]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[16] > 0 AND s[17] > 0 THEN s[18]::DOUBLE / s[16]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[19] > 0 AND s[20] > 0 THEN s[21]::DOUBLE / s[19]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[22] > 0 AND s[23] > 0 THEN s[24]::DOUBLE / s[22]::DOUBLE ELSE 0.0 END
            ) / _chrf_effective_order(s),
            (
            CASE WHEN s[1] > 0 AND s[2] > 0 THEN s[3]::DOUBLE / s[2]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[4] > 0 AND s[5] > 0 THEN s[6]::DOUBLE / s[5]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[7] > 0 AND s[8] > 0 THEN s[9]::DOUBLE / s[8]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[10] > 0 AND s[11] > 0 THEN s[12]::DOUBLE / s[11]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[13] > 0 AND s[14] > 0 THEN s[15]::DOUBLE / s[14]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[16] > 0 AND s[17] > 0 THEN s[18]::DOUBLE / s[17]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[19] > 0 AND s[20] > 0 THEN s[21]::DOUBLE / s[20]::DOUBLE ELSE 0.0 END
        + CASE WHEN s[22] > 0 AND s[23] > 0 THEN s[24]::DOUBLE / s[23]::DOUBLE ELSE 0.0 END
            ) / _chrf_effective_order(s))
    END;

-- TER from summed [edits, reference length].
CREATE MACRO ter_score(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN s[2] > 0 THEN 100 * (s[1] / s[2])
        WHEN s[1] > 0 THEN 100.0
        ELSE 0.0
    END;

-- Corpus scores straight from per-segment statistics (aggregate macros).
CREATE MACRO corpus_bleu(s) AS bleu_score(bleu_stats_sum(s));
CREATE MACRO corpus_chrf(s) AS chrf_score(chrf_stats_sum(s));
CREATE MACRO corpus_ter(s) AS ter_score(ter_stats_sum(s));


-- ---------------------------------------------------------------------------------------------
-- Per run: surface metrics, counts, ingested metrics.

-- Corpus BLEU, chrF++, TER (sacrebleu scale 0-100), exact match rate and mean length ratio.
CREATE VIEW run_surface AS
SELECT
    run_id,
    n_segments,
    bleu_score(bleu_stats) AS bleu,
    chrf_score(chrf_stats) AS chrf_plus_plus,
    ter_score(ter_stats) AS ter,
    n_exact / nullif(n_exact_evaluated, 0) AS exact_match_rate,
    length_ratio
FROM run_stat_sums;

-- Every ingested metric per run: the run-level value when the run card gave one, else the mean
-- of the per-entry values (absent metrics have no row: NULL, never 0).
CREATE VIEW run_metric_values AS
WITH run_level AS (
    SELECT run_id, metric, value, 'run' AS source
    FROM metric_values WHERE seg_idx IS NULL
),
entry_level AS (
    SELECT run_id, metric, avg(value) AS value, 'entries' AS source
    FROM metric_values WHERE seg_idx IS NOT NULL
    GROUP BY run_id, metric
)
SELECT * FROM run_level
UNION ALL
SELECT e.* FROM entry_level e
WHERE NOT EXISTS (SELECT 1 FROM run_level r WHERE r.run_id = e.run_id AND r.metric = e.metric);

-- ---------------------------------------------------------------------------------------------
-- Composite and tier (docs/scores.md).

-- Profile A when the target language is marked in `languages` as having an FST; for languages
-- not in that table, when the run has an FST acceptance rate; otherwise B.
CREATE VIEW run_profiles AS
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

-- The composite inputs on 0-1 (1 = best): chrF++ / 100, rates inverted where lower is better.
CREATE VIEW run_composite_inputs AS
WITH values_ AS (
    SELECT run_id, metric, value FROM run_metric_values
    UNION ALL
    SELECT run_id, 'chrf_plus_plus', chrf_plus_plus FROM run_surface
    UNION ALL
    SELECT run_id, 'exact_match_rate', exact_match_rate FROM run_surface
    WHERE exact_match_rate IS NOT NULL
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
    END AS value
FROM run_profiles p
JOIN composite_weights w ON w.profile = p.profile
LEFT JOIN values_ v ON v.run_id = p.run_id AND v.metric = w.metric;

-- Composite = sum(w * v) / sum(w) over the profile's metrics that are present; the effective
-- weights say how the missing metrics' weight was redistributed. No usable metric -> NULL.
CREATE VIEW run_composite AS
SELECT
    run_id,
    any_value(profile) AS profile,
    sum(weight * value) FILTER (WHERE value IS NOT NULL)
        / sum(weight) FILTER (WHERE value IS NOT NULL) AS composite,
    list(metric ORDER BY metric) FILTER (WHERE value IS NOT NULL) AS metrics_used,
    list(metric ORDER BY metric) FILTER (WHERE value IS NULL) AS metrics_missing,
    list({'metric': metric, 'value': value, 'weight': weight} ORDER BY metric)
        FILTER (WHERE value IS NOT NULL) AS inputs
FROM run_composite_inputs
GROUP BY run_id;

-- First tier whose threshold the composite reaches (thresholds inclusive); NULL -> unscored.
CREATE MACRO quality_tier(composite) AS
    CASE
        WHEN composite IS NULL THEN 'unscored'
        ELSE coalesce(
            (SELECT t.tier FROM quality_tiers t WHERE composite >= t.min_composite
             ORDER BY t.min_composite DESC LIMIT 1),
            'baseline')
    END;

CREATE VIEW run_tiers AS
SELECT run_id, composite, quality_tier(composite) AS quality_tier
FROM run_composite;

-- ---------------------------------------------------------------------------------------------
-- Cost and speed (docs/scores.md).

CREATE VIEW run_cost AS
WITH base AS (
    SELECT
        r.run_id,
        r.n_entries,
        r.prompt_tokens,
        r.completion_tokens,
        r.reasoning_tokens,
        r.cached_tokens,
        CASE WHEN r.prompt_tokens IS NULL AND r.completion_tokens IS NULL THEN NULL
             ELSE coalesce(r.prompt_tokens, 0) + coalesce(r.completion_tokens, 0)
        END AS total_tokens,
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
    b.total_cost_usd / nullif(b.source_chars, 0) AS cost_per_source_char,
    CASE WHEN b.total_cost_usd > 0 AND b.n_entries > 0
         THEN c.composite / log2(1 + b.total_cost_usd / b.n_entries * 1000)
    END AS cost_adjusted
FROM base b
LEFT JOIN run_composite c USING (run_id);

CREATE VIEW run_speed AS
SELECT
    r.run_id,
    r.elapsed_seconds,
    s.avg_latency_seconds,
    s.median_latency_seconds,
    s.p95_latency_seconds,
    coalesce(s.n_latencies, 0) AS n_latencies,
    c.total_tokens / nullif(r.elapsed_seconds, 0) AS tokens_per_second,
    r.n_entries / nullif(r.elapsed_seconds / 60, 0) AS entries_per_minute
FROM runs r
LEFT JOIN run_sums s USING (run_id)
LEFT JOIN run_cost c USING (run_id);

-- ---------------------------------------------------------------------------------------------
-- Breakdowns (docs/scores.md): by difficulty and by provenance.

CREATE VIEW run_breakdowns AS
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

-- ---------------------------------------------------------------------------------------------
-- Exposure per run (docs/exposure.md): bins, TM baseline, GenGap. A test set may be audited against
-- several training corpora, so every row carries its audit_id.

CREATE VIEW run_bins AS
WITH pairs AS (
    SELECT r.run_id, a.audit_id, a.train_corpus_id, a.n_segments AS total
    FROM runs r JOIN audits a ON a.test_corpus_id = r.test_corpus_id
),
bins(bin, bin_order) AS (
    VALUES ('all', 0), ('source_exact', 1), ('near', 2), ('medium', 3), ('far', 4)
)
SELECT
    p.run_id,
    p.audit_id,
    p.train_corpus_id,
    b.bin,
    b.bin_order,
    coalesce(g.n_segments, 0) AS n_segments,
    coalesce(g.n_segments, 0) / p.total AS share,
    g.sum_source_exposure / g.n_segments AS mean_source_exposure,
    bleu_score(g.bleu_stats) AS bleu,
    chrf_score(g.chrf_stats) AS chrf_plus_plus,
    bleu_score(g.tm_bleu_stats) AS tm_bleu,
    chrf_score(g.tm_chrf_stats) AS tm_chrf_plus_plus,
    bleu_score(g.bleu_stats) - bleu_score(g.tm_bleu_stats) AS delta_bleu,
    chrf_score(g.chrf_stats) - chrf_score(g.tm_chrf_stats) AS delta_chrf_plus_plus
FROM pairs p
CROSS JOIN bins b
LEFT JOIN run_bin_sums g
    ON g.run_id = p.run_id AND g.audit_id = p.audit_id AND g.bin = b.bin;

-- GenGap = score on `near` - score on `far` (NULL when either bin is empty), for the system and
-- the TM, with the audit's PairLeak and exposure summary.
CREATE VIEW run_exposure AS
WITH by_bin AS (
    SELECT
        run_id, audit_id, train_corpus_id,
        max(bleu) FILTER (WHERE bin = 'all') AS bleu,
        max(tm_bleu) FILTER (WHERE bin = 'all') AS tm_bleu,
        max(tm_chrf_plus_plus) FILTER (WHERE bin = 'all') AS tm_chrf_plus_plus,
        max(delta_bleu) FILTER (WHERE bin = 'all') AS delta_tm_bleu,
        max(delta_chrf_plus_plus) FILTER (WHERE bin = 'all') AS delta_tm_chrf_plus_plus,
        max(bleu) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(bleu) FILTER (WHERE bin = 'far' AND n_segments > 0) AS gengap_bleu,
        max(chrf_plus_plus) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(chrf_plus_plus) FILTER (WHERE bin = 'far' AND n_segments > 0) AS gengap_chrf,
        max(tm_bleu) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(tm_bleu) FILTER (WHERE bin = 'far' AND n_segments > 0) AS tm_gengap_bleu,
        max(tm_chrf_plus_plus) FILTER (WHERE bin = 'near' AND n_segments > 0)
            - max(tm_chrf_plus_plus) FILTER (WHERE bin = 'far' AND n_segments > 0)
            AS tm_gengap_chrf,
        max(share) FILTER (WHERE bin = 'source_exact') AS source_exact_share,
        max(share) FILTER (WHERE bin = 'near') AS near_share,
        max(share) FILTER (WHERE bin = 'medium') AS medium_share,
        max(share) FILTER (WHERE bin = 'far') AS far_share
    FROM run_bins
    GROUP BY run_id, audit_id, train_corpus_id
)
SELECT
    b.*,
    src.mean AS mean_source_exposure,
    tgt.mean AS mean_target_exposure,
    pair.mean AS mean_pair_exposure,
    pair.shares_at_or_above[1] AS pairleak_070,
    pair.shares_at_or_above[2] AS pairleak_085,
    pair.shares_at_or_above[3] AS pairleak_095,
    pair.exact_share AS pair_exact_share,
    a.mode AS audit_mode,
    a.created_at AS audited_at
FROM by_bin b
JOIN audits a USING (audit_id)
JOIN audit_exposure_summary src ON src.audit_id = b.audit_id AND src.side = 'source'
JOIN audit_exposure_summary tgt ON tgt.audit_id = b.audit_id AND tgt.side = 'target'
JOIN audit_exposure_summary pair ON pair.audit_id = b.audit_id AND pair.side = 'pair';
