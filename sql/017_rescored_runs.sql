-- tame-wh warehouse schema, version 17: runs re-scored from stored hypotheses (`tame-wh rescore`,
-- docs/metrics.md, "Re-scoring stored runs"). A re-scored run is a run of its own — the same
-- test set, hypotheses, run card, entry metrics and tags as its source, with the statistics of
-- other metric options; its run id is the one a fresh ingest of the same file with those options
-- gets. This table says which stored run each was derived from (never a re-scored run itself):
-- boards list the runs as ingested unless they are asked for other options.

CREATE TABLE run_rescores (
    run_id        VARCHAR PRIMARY KEY,          -- the re-scored run
    source_run_id VARCHAR NOT NULL,             -- the run as ingested
    rescored_at   TIMESTAMP NOT NULL
);
