-- tame-wh warehouse schema, version 14: the composite's inputs say where each value comes from,
-- and an ingested metric's value is read from `metric_values` in one pass.
--
-- `run_composite_inputs` gains `transform` (the weight row's) and `source` ('surface' for chrF++
-- and exact match, from the stored statistics; 'entries' for the mean of per-entry values; 'run'
-- for a run-level value), and each element of `run_composite.inputs` carries both. The composite
-- interval computed at ingest reads the composite and everything it resamples in one read of
-- `run_composite` (on a lake every table a query reads costs catalog round trips).
-- The stored sums behind chrF++ and exact match are read once, not once for each. And
-- `run_metric_values` groups `metric_values` once instead of reading it twice; with
-- (run_id, seg_idx, metric) unique its rows are the same: the run-level value when there is one,
-- else the mean of the per-entry values. The composite adds its inputs in metric order, so that
-- a file and a lake (whose scans return rows in different orders) agree to the last bit.

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

CREATE OR REPLACE VIEW run_composite_sources AS
SELECT run_id, metric, weight, transform, value, source
FROM run_composite_inputs
WHERE value IS NOT NULL;
