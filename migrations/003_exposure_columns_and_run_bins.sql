-- 003: training-exposure columns (TM baseline, GenGap, PairLeak, bin shares) on run_cards, a
-- content hash for idempotent upserts, and run_bins (run x exposure bin scores) for dashboards.

ALTER TABLE run_cards
    ADD COLUMN audit_id text,
    ADD COLUMN tm_bleu real,
    ADD COLUMN tm_chrf_plus_plus real,
    ADD COLUMN delta_tm_bleu real,
    ADD COLUMN delta_tm_chrf_plus_plus real,
    ADD COLUMN gengap_bleu real,
    ADD COLUMN gengap_chrf real,
    ADD COLUMN tm_gengap_bleu real,
    ADD COLUMN tm_gengap_chrf real,
    ADD COLUMN pairleak_070 real,
    ADD COLUMN pairleak_085 real,
    ADD COLUMN pairleak_095 real,
    ADD COLUMN source_exact_share real,
    ADD COLUMN near_share real,
    ADD COLUMN medium_share real,
    ADD COLUMN far_share real,
    ADD COLUMN mean_source_exposure real,
    ADD COLUMN content_hash text;

CREATE TABLE run_bins (
    fingerprint_hash      text NOT NULL REFERENCES run_cards (fingerprint_hash) ON DELETE CASCADE,
    bin                   text NOT NULL CHECK (bin IN ('all', 'source_exact', 'near', 'medium', 'far')),
    audit_id              text NOT NULL,
    n_segments            integer NOT NULL,
    share                 real,
    mean_source_exposure  real,
    bleu                  real,
    chrf_plus_plus        real,
    tm_bleu               real,
    tm_chrf_plus_plus     real,
    delta_bleu            real,
    delta_chrf_plus_plus  real,
    synced_at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (fingerprint_hash, bin)
);

ALTER TABLE run_bins ENABLE ROW LEVEL SECURITY;

CREATE POLICY run_bins_read ON run_bins FOR SELECT TO anon, authenticated USING (true);
CREATE POLICY run_bins_write ON run_bins FOR ALL TO service_role USING (true) WITH CHECK (true);

GRANT SELECT ON run_bins TO anon, authenticated;
GRANT SELECT, INSERT, UPDATE, DELETE ON run_bins TO service_role;
