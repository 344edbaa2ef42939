-- tame-wh warehouse schema, version 23: how long a metric plugin may take to load or to score
-- one run before the command stops it (docs/metrics.md, "Metric plugins").

INSERT INTO settings
SELECT 'plugin.timeout_seconds', 600,
       'metric plugins: seconds a plugin may take to load or to score one run'
WHERE NOT EXISTS (SELECT 1 FROM settings WHERE key = 'plugin.timeout_seconds');
