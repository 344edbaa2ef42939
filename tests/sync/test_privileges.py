"""Client roles (anon, authenticated) may read the dashboard tables and nothing else, whatever
the database's default privileges (both fixtures of tests/sync/conftest.py): no TRUNCATE, no
writes, no locks that would block a sync, no sequence changes, no access to the ledger."""

from __future__ import annotations

import psycopg
import pytest

from tests.backends import TEMPLATES, drop_database, new_database
from tests.sync.conftest import CLIENT_ROLES, apply_supabase_defaults
from warehouse.store.schema import open_warehouse
from warehouse.sync.migrate import migrate
from warehouse.sync.postgres import sync_direct

TABLES = ("run_cards", "run_bins", "tame_wh_migrations")
TABLE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")
READABLE = {("run_cards", "SELECT"), ("run_bins", "SELECT")}

# What a client could try with the privileges Supabase grants by default. Every one must be
# refused with insufficient privilege (RLS violations carry the same SQLSTATE).
ATTACKS = [
    "TRUNCATE run_cards CASCADE",
    "TRUNCATE run_bins",
    "TRUNCATE tame_wh_migrations",
    "INSERT INTO run_cards (fingerprint_hash, run_card) VALUES ('evil', '{}')",
    "UPDATE run_cards SET composite_score = 1",
    "DELETE FROM run_cards",
    "INSERT INTO run_bins (fingerprint_hash, bin, audit_id, n_segments) "
    "SELECT fingerprint_hash, 'all', 'x', 1 FROM run_cards LIMIT 1",
    "UPDATE run_bins SET bleu = 100",
    "DELETE FROM run_bins",
    "SELECT * FROM tame_wh_migrations",
    "INSERT INTO tame_wh_migrations (name, checksum) VALUES ('999_evil.sql', 'x')",
    "UPDATE tame_wh_migrations SET checksum = 'tampered'",
    "DELETE FROM tame_wh_migrations",
    "SELECT setval('run_cards_id_seq', 1)",
    "SELECT nextval('run_cards_id_seq')",
    "LOCK TABLE run_cards IN ACCESS EXCLUSIVE MODE",
    "LOCK TABLE run_bins IN EXCLUSIVE MODE",
    "SELECT * FROM run_cards FOR UPDATE",
    "SELECT * FROM run_bins FOR SHARE",
    "ALTER TABLE run_cards DISABLE ROW LEVEL SECURITY",
    "ALTER TABLE tame_wh_migrations DISABLE ROW LEVEL SECURITY",
    "DROP TABLE run_bins",
    "CREATE POLICY evil ON run_cards FOR ALL TO anon USING (true) WITH CHECK (true)",
]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    """The demo warehouse, built once for the module."""
    path = tmp_path_factory.mktemp("privileges") / "demo.duckdb"
    TEMPLATES.copy_demo_file(path)
    return path


@pytest.fixture(scope="module", params=["plain", "supabase-defaults"])
def synced(request, demo_db):
    """A migrated target holding the demo's three runs (one per module and kind of database;
    every attack below runs in a transaction that is rolled back)."""
    name, dsn = new_database()
    try:
        if request.param == "supabase-defaults":
            apply_supabase_defaults(dsn)
        migrate(dsn)
        con = open_warehouse(demo_db)
        try:
            assert sync_direct(con, dsn, full=True).sent_runs == 3
        finally:
            con.close()
        yield dsn
    finally:
        drop_database(name)


def _counts(dsn):
    with psycopg.connect(dsn) as conn:
        return tuple(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES)


@pytest.mark.parametrize("role", CLIENT_ROLES)
def test_client_roles_hold_only_select_on_the_dashboard_tables(synced, role):
    with psycopg.connect(synced) as conn:
        for table in TABLES:
            for privilege in TABLE_PRIVILEGES:
                (held,) = conn.execute(
                    "SELECT has_table_privilege(%s, %s, %s)", [role, table, privilege]
                ).fetchone()
                assert held == ((table, privilege) in READABLE), (role, table, privilege)
        for privilege in ("USAGE", "SELECT", "UPDATE"):
            (held,) = conn.execute(
                "SELECT has_sequence_privilege(%s, 'run_cards_id_seq', %s)", [role, privilege]
            ).fetchone()
            assert not held, (role, privilege)


@pytest.mark.parametrize("role", CLIENT_ROLES)
@pytest.mark.parametrize("attack", ATTACKS)
def test_client_attack_is_refused(synced, role, attack):
    before = _counts(synced)
    with psycopg.connect(synced) as conn:
        conn.execute(f"SET ROLE {role}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(attack)
        conn.rollback()
    assert _counts(synced) == before


def test_after_every_attack_clients_still_read_and_migrate_and_sync_still_work(
    synced, run_cli, demo_db
):
    for role in CLIENT_ROLES:
        for attack in ATTACKS:
            with psycopg.connect(synced) as conn:
                conn.execute(f"SET ROLE {role}")
                try:
                    conn.execute(attack)
                    conn.commit()  # had it worked, it would stick
                except psycopg.errors.InsufficientPrivilege:
                    conn.rollback()
        with psycopg.connect(synced) as conn:
            conn.execute(f"SET ROLE {role}")
            assert conn.execute("SELECT count(*) FROM run_cards").fetchone() == (3,)
            assert conn.execute("SELECT count(*) FROM run_bins").fetchone() == (15,)
    assert run_cli("migrate", "--dsn", synced).exit_code == 0
    resync = run_cli("sync", "--dsn", synced, "--full", db=demo_db)
    assert resync.exit_code == 0, resync.output
    assert _counts(synced)[:2] == (3, 15)


def test_service_role_reads_the_ledger_and_writes_the_tables(synced):
    with psycopg.connect(synced) as conn:
        conn.execute("SET ROLE service_role")
        assert conn.execute("SELECT count(*) FROM tame_wh_migrations").fetchone()[0] >= 4
        conn.execute("UPDATE run_cards SET composite_score = composite_score")
        conn.rollback()


def test_defaults_granted_after_the_ledger_exists_do_not_reopen_it(pg_dsn):
    # The ledger is created with its revocations in one transaction, before migration 001.
    migrate(pg_dsn)
    apply_supabase_defaults(pg_dsn)  # later tables would get these; existing ones keep theirs
    with psycopg.connect(pg_dsn) as conn:
        for role in CLIENT_ROLES:
            for privilege in TABLE_PRIVILEGES:
                (held,) = conn.execute(
                    "SELECT has_table_privilege(%s, 'tame_wh_migrations', %s)", [role, privilege]
                ).fetchone()
                assert not held, (role, privilege)


@pytest.mark.parametrize("role", CLIENT_ROLES)
def test_a_client_role_can_neither_migrate_nor_sync_and_is_told_so(synced, run_cli, demo_db, role):
    info = psycopg.conninfo.conninfo_to_dict(synced)
    as_client = psycopg.conninfo.make_conninfo(**{**info, "options": f"-c role={role}"})
    for args in (["migrate", "--dsn", as_client], ["sync", "--dsn", as_client, "--full"]):
        result = run_cli(*args, db=demo_db)
        assert result.exit_code == 4, result.output
        assert "internal error" not in result.stderr and "tame_wh_migrations" in result.stderr
    assert _counts(synced)[:2] == (3, 15)
