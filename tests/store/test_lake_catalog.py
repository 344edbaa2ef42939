"""A lake's catalog is private: its tables live in their own PostgreSQL schema (`tame_lake`),
closed to PUBLIC and to Supabase's client roles (anon, authenticated) even under Supabase's
default privileges; `doctor` says so, and calls an open catalog a problem; `init` moves a catalog
an earlier version made in `public` and seals it, keeping every row."""

from __future__ import annotations

import json

import psycopg
import pytest
from psycopg import sql

from tests.backends import Warehouse
from tests.sync.conftest import CLIENT_ROLES, apply_supabase_defaults
from warehouse.store.address import CATALOG_SCHEMA

# What a client role could try on a catalog table it could reach.
TABLE_ATTACKS = (
    "SELECT * FROM {} LIMIT 1",
    "DELETE FROM {}",
    "TRUNCATE {}",
    "UPDATE {} SET path = 'x' WHERE false",
    "LOCK TABLE {} IN ACCESS EXCLUSIVE MODE",
)


def _libpq(lake: Warehouse) -> str:
    return lake.db.removeprefix("ducklake:postgres:")


def _catalog_objects(libpq: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """Every relation (schema, name, kind) and function (schema, name) of the lake's catalog,
    read from PostgreSQL's own catalog: whatever DuckLake made, wherever it made it."""
    with psycopg.connect(libpq) as conn:
        relations = conn.execute(
            "SELECT n.nspname, c.relname, c.relkind FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') "
            "AND (c.relname LIKE 'ducklake%%' OR n.nspname = %s) ORDER BY 1, 2",
            [CATALOG_SCHEMA],
        ).fetchall()
        functions = conn.execute(
            "SELECT n.nspname, p.proname FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2"
        ).fetchall()
    return relations, functions


def _refused_everything(libpq: str) -> int:
    """Try every attack as every client role on every catalog table; each must be refused.
    Returns the number of catalog tables tried."""
    relations, functions = _catalog_objects(libpq)
    tables = [(schema, name) for schema, name, kind in relations if kind in ("r", "p")]
    for role in CLIENT_ROLES:
        with psycopg.connect(libpq) as conn:
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
            for schema, name in tables:
                target = sql.Identifier(schema, name)
                for attack in TABLE_ATTACKS:
                    with pytest.raises(psycopg.errors.InsufficientPrivilege):
                        conn.execute(sql.SQL(attack).format(target))
                    conn.rollback()
                    conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
            for schema, name in functions:
                (held,) = conn.execute(
                    "SELECT bool_or(has_function_privilege(%s, p.oid, 'EXECUTE')) FROM pg_proc p "
                    "JOIN pg_namespace n ON n.oid = p.pronamespace "
                    "WHERE n.nspname = %s AND p.proname = %s",
                    [role, schema, name],
                ).fetchone()
                assert not held, (role, schema, name)
    return len(tables)


@pytest.fixture
def supabase_lake(lake: Warehouse) -> Warehouse:
    """A lake whose catalog database has Supabase's roles and default privileges."""
    apply_supabase_defaults(_libpq(lake))
    return lake


# The catalog's privileges do not depend on the data path: a data directory's lake is enough.
@pytest.mark.parametrize("lake", ["lake-dir"], indirect=True)
def test_client_roles_reach_no_catalog_table_under_supabase_defaults(supabase_lake):
    lake = supabase_lake
    assert lake.run("demo", "--json").exit_code == 0
    relations, _ = _catalog_objects(_libpq(lake))
    # Every catalog table sits in the catalog schema, none in public.
    assert {schema for schema, _name, _kind in relations} == {CATALOG_SCHEMA}
    assert _refused_everything(_libpq(lake)) >= 25
    doctor = lake.run("doctor", "--json")
    assert doctor.exit_code == 0, doctor.output
    report = json.loads(doctor.stdout)["warehouse"]
    assert report["catalog_schema"] == CATALOG_SCHEMA and report["catalog_exposed"] == []
    assert "private (schema tame_lake" in lake.run("doctor").output


def _make_legacy(libpq: str) -> None:
    """Put the catalog where earlier versions made it: every table in `public`, with the grants
    Supabase's defaults give client roles there."""
    with psycopg.connect(libpq) as conn:
        names = conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'",
            [CATALOG_SCHEMA],
        ).fetchall()
        for (name,) in names:
            conn.execute(
                sql.SQL("ALTER TABLE {} SET SCHEMA public").format(
                    sql.Identifier(CATALOG_SCHEMA, name)
                )
            )
            conn.execute(
                sql.SQL("GRANT ALL ON {} TO anon, authenticated").format(
                    sql.Identifier("public", name)
                )
            )
        conn.execute(sql.SQL("DROP SCHEMA {}").format(sql.Identifier(CATALOG_SCHEMA)))


@pytest.mark.parametrize("demo_lake", ["lake-dir"], indirect=True)
def test_init_moves_an_earlier_versions_open_catalog_and_keeps_every_row(demo_lake):
    lake = demo_lake  # the demo's tables, moved below as an earlier version left them
    apply_supabase_defaults(_libpq(lake))
    tables = lake.tables()
    board = json.loads(lake.run("leaderboard", "--json").stdout)
    _make_legacy(_libpq(lake))
    with psycopg.connect(_libpq(lake)) as conn:  # the hole this closes
        conn.execute("SET ROLE anon")
        assert conn.execute("SELECT count(*) FROM public.ducklake_snapshot").fetchone()[0] > 0

    # An earlier version's lake still reads, and doctor calls its open catalog a problem.
    assert json.loads(lake.run("leaderboard", "--json").stdout) == board
    doctor = lake.run("doctor")
    assert doctor.exit_code == 3
    assert "OPEN in schema public" in doctor.output and "tame-wh init" in doctor.output
    exposed = json.loads(lake.run("doctor", "--json").stdout)["warehouse"]["catalog_exposed"]
    assert "anon: SELECT on table ducklake_snapshot" in exposed
    assert "authenticated: TRUNCATE on table ducklake_data_file" in exposed

    moved = lake.run("init")
    assert moved.exit_code == 0, moved.output
    assert "moved the lake's catalog" in moved.output
    relations, _ = _catalog_objects(_libpq(lake))
    assert {schema for schema, _name, _kind in relations} == {CATALOG_SCHEMA}
    assert _refused_everything(_libpq(lake)) >= 25
    assert lake.tables() == tables
    assert json.loads(lake.run("leaderboard", "--json").stdout) == board
    assert lake.run("doctor").exit_code == 0
    again = lake.run("init")
    assert again.exit_code == 0 and "moved" not in again.output


def test_doctor_finds_a_grant_made_on_the_catalog_after_it_was_sealed(lake):
    assert lake.run("init").exit_code == 0
    with psycopg.connect(_libpq(lake)) as conn:
        conn.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO PUBLIC").format(sql.Identifier(CATALOG_SCHEMA))
        )
        conn.execute(
            sql.SQL("GRANT SELECT ON {} TO PUBLIC").format(
                sql.Identifier(CATALOG_SCHEMA, "ducklake_metadata")
            )
        )
    report = json.loads(lake.run("doctor", "--json").stdout)
    assert report["ok"] is False
    assert "public: SELECT on table ducklake_metadata" in report["warehouse"]["catalog_exposed"]
    assert "public: USAGE on schema tame_lake" in report["warehouse"]["catalog_exposed"]
    assert lake.run("init").exit_code == 0  # init seals it again
    assert json.loads(lake.run("doctor", "--json").stdout)["ok"] is True
