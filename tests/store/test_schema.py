"""Schema creation, idempotent upgrades and refusal of warehouses from newer code."""

from __future__ import annotations

import duckdb
import pytest

from warehouse.errors import SchemaError
from warehouse.store.resources import schema_files
from warehouse.store.schema import code_schema_version, init_warehouse, open_warehouse


def test_init_creates_every_core_table(db_path):
    status = init_warehouse(db_path)
    assert status.created and status.after == code_schema_version()
    con = duckdb.connect(str(db_path))
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert {
        "corpora",
        "segments",
        "audits",
        "exposures",
        "runs",
        "hypotheses",
        "segment_stats",
        "metric_values",
        "settings",
        "composite_weights",
        "quality_tiers",
        "languages",
        "schema_version",
    } <= tables
    versions = con.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [v[0] for v in versions] == list(range(1, code_schema_version() + 1))


def test_init_twice_is_a_no_op(db_path):
    init_warehouse(db_path)
    again = init_warehouse(db_path)
    assert not again.created and not again.upgraded


def test_every_table_has_a_key(db_path):
    # A primary key, or a unique key where a key column may be NULL (metric_values.seg_idx).
    init_warehouse(db_path)
    con = duckdb.connect(str(db_path))
    without = con.execute(
        "SELECT table_name FROM duckdb_tables() t WHERE NOT EXISTS (SELECT 1 FROM "
        "duckdb_constraints() c WHERE c.table_name = t.table_name "
        "AND c.constraint_type IN ('PRIMARY KEY', 'UNIQUE'))"
    ).fetchall()
    assert without == []


def test_older_warehouse_is_upgraded_in_order(db_path):
    con = duckdb.connect(str(db_path))
    first = schema_files()[0]
    con.execute(first.text)
    con.execute("INSERT INTO schema_version (version, tame_wh_version) VALUES (1, 'old')")
    con.close()
    status = init_warehouse(db_path)
    assert (status.before, status.after) == (1, code_schema_version())
    con = duckdb.connect(str(db_path))
    weight = con.execute(
        "SELECT weight FROM composite_weights "
        "WHERE profile = 'A' AND metric = 'fst_acceptance_rate'"
    ).fetchone()
    assert weight == (0.25,)


def test_warehouse_from_newer_code_is_refused(db_path):
    init_warehouse(db_path)
    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO schema_version (version, tame_wh_version) VALUES (999, '99.0.0')")
    con.close()
    with pytest.raises(SchemaError, match="newer tame-wh \\(schema version 999\\)"):
        open_warehouse(db_path)


def test_foreign_duckdb_file_is_refused(db_path):
    con = duckdb.connect(str(db_path))
    con.execute("CREATE TABLE mine (x INTEGER)")
    con.close()
    with pytest.raises(SchemaError, match="not a tame-wh warehouse"):
        open_warehouse(db_path)


def test_file_that_is_not_duckdb_is_refused(db_path):
    db_path.write_text("hello, I am a text file\n")
    with pytest.raises(SchemaError, match=r"cannot open warehouse|not a usable DuckDB"):
        open_warehouse(db_path)


def test_composite_weights_sum_to_one_per_profile(db_path):
    init_warehouse(db_path)
    con = duckdb.connect(str(db_path))
    sums = con.execute(
        "SELECT profile, round(sum(weight), 9) FROM composite_weights GROUP BY profile ORDER BY 1"
    ).fetchall()
    assert sums == [("A", 1.0), ("B", 1.0)]


def test_bin_and_tm_rules_are_the_sql_macros_the_audit_uses(db_path):
    init_warehouse(db_path)
    con = duckdb.connect(str(db_path))
    bins = con.execute(
        "SELECT exposure_bin(e, x, 0.70, 0.30) FROM (VALUES (1.0, true), (0.70, false), "
        "(0.6999, false), (0.30, false), (0.2999, false)) t(e, x)"
    ).fetchall()
    assert [b for (b,) in bins] == ["source_exact", "near", "medium", "medium", "far"]
    tm = con.execute(
        "SELECT tm_hypothesis('target', 'src', 'empty'), tm_hypothesis(NULL, 'src', 'source'), "
        "tm_hypothesis(NULL, 'src', 'empty')"
    ).fetchone()
    assert tm == ("target", "src", "")
    views = {v for (v,) in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    assert "run_stat_sums" not in views and "run_surface" in views
