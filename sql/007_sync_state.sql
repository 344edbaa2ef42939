-- tame-wh warehouse schema: what was last sent to each sync target (Supabase/Postgres), so that
-- `tame-wh sync` is incremental. A run is resent when its payload's content hash changes.

CREATE TABLE sync_state (
    target           VARCHAR NOT NULL,            -- secret-free target name
    run_id           VARCHAR NOT NULL,
    fingerprint_hash VARCHAR NOT NULL,
    content_hash     VARCHAR NOT NULL,
    synced_at        TIMESTAMP NOT NULL,
    PRIMARY KEY (target, run_id)
);
