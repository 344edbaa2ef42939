-- 001: the run_cards table that BI dashboards read (SPEC §9), with row-level security.
-- Applied in its own transaction by `tame-wh migrate`; never edit once applied, add a new file.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'anon') THEN
        CREATE ROLE anon NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'authenticated') THEN
        CREATE ROLE authenticated NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'service_role') THEN
        CREATE ROLE service_role NOLOGIN BYPASSRLS;
    END IF;
END
$$;

CREATE TABLE run_cards (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fingerprint_hash      text NOT NULL,
    run_card              jsonb NOT NULL,
    model_slug            text,
    condition             text,
    dataset_id            text,
    language_pair         text,
    composite_score       real,
    quality_tier          text,
    chrf_plus_plus        real,
    exact_match_rate      real,
    fst_acceptance_rate   real,
    equivalent_match_rate real,
    semantic_score        real,
    ter                   real,
    length_ratio          real,
    code_switching_rate   real,
    hallucination_rate    real,
    terminology_adherence real,
    total_cost_usd        real,
    cost_per_entry_usd    real,
    cost_per_source_char  real,
    avg_latency_seconds   real,
    tokens_per_second     real,
    entries_per_minute    real,
    elapsed_seconds       real,
    synced_at             timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT run_cards_fingerprint_hash_key UNIQUE (fingerprint_hash)
);

CREATE INDEX run_cards_composite_score_idx ON run_cards (composite_score);
CREATE INDEX run_cards_leaderboard_idx ON run_cards (dataset_id, chrf_plus_plus);
CREATE INDEX run_cards_model_slug_idx ON run_cards (model_slug);

ALTER TABLE run_cards ENABLE ROW LEVEL SECURITY;

CREATE POLICY run_cards_read ON run_cards FOR SELECT TO anon, authenticated USING (true);
CREATE POLICY run_cards_write ON run_cards FOR ALL TO service_role USING (true) WITH CHECK (true);

GRANT SELECT ON run_cards TO anon, authenticated;
GRANT SELECT, INSERT, UPDATE, DELETE ON run_cards TO service_role;
