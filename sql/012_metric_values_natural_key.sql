-- tame-wh warehouse schema, version 12: `metric_values` without its sequence-drawn surrogate key
-- (nothing read it). A metric value is identified by (run_id, seg_idx, metric), the same on a
-- local file and on a DuckLake lake, where sequences do not exist (docs/lake.md); a copy between
-- the two keeps every row as it is.

CREATE TABLE metric_values_v12 (
    run_id  VARCHAR NOT NULL,
    seg_idx BIGINT,                           -- NULL: a run-level value
    metric  VARCHAR NOT NULL,
    value   DOUBLE NOT NULL CHECK (isfinite(value)),
    UNIQUE (run_id, seg_idx, metric)
);

INSERT INTO metric_values_v12
SELECT run_id, seg_idx, metric, value FROM metric_values ORDER BY metric_value_id;

DROP TABLE metric_values;

ALTER TABLE metric_values_v12 RENAME TO metric_values;

DROP SEQUENCE metric_value_seq;
