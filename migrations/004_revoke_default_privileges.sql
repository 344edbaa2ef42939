-- 004: privileges that do not depend on the database's defaults.
--
-- Supabase's default privileges grant anon and authenticated ALL on every new table and
-- sequence in `public`. Row-level security stops their INSERT/UPDATE/DELETE, but not TRUNCATE
-- (which ignores RLS), TRIGGER, REFERENCES or setval() on the identity sequence, and the
-- migration ledger had no RLS at all. Here every privilege is revoked from the client roles and
-- only what the RLS policies intend is granted back: SELECT on run_cards and run_bins. The
-- ledger gets RLS without any client policy and no client privileges; only the table owner
-- (the role that runs `tame-wh migrate`) and service_role may read it.

REVOKE ALL ON TABLE run_cards, run_bins FROM PUBLIC, anon, authenticated;
GRANT SELECT ON TABLE run_cards, run_bins TO anon, authenticated;

REVOKE ALL ON TABLE run_cards, run_bins FROM service_role;
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE run_cards, run_bins TO service_role;

REVOKE ALL ON SEQUENCE run_cards_id_seq FROM PUBLIC, anon, authenticated, service_role;

REVOKE ALL ON TABLE tame_wh_migrations FROM PUBLIC, anon, authenticated, service_role;
GRANT SELECT ON TABLE tame_wh_migrations TO service_role;
ALTER TABLE tame_wh_migrations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tame_wh_migrations_read ON tame_wh_migrations FOR SELECT TO service_role
    USING (true);
