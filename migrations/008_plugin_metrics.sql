-- 008: metric plugins' scores on run_cards (docs/metrics.md, "Metric plugins"): one object per
-- run, metric name -> {"value": the run's score (mean of its segments'), "signature": how it was
-- computed (plugin version, model, package)}; scores of different signatures are not comparable.

ALTER TABLE run_cards ADD COLUMN plugin_metrics jsonb;
