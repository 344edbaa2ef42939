"""Schema creation, idempotent upgrades and refusal of warehouses from newer code."""

from __future__ import annotations

import json
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.backends import BACKENDS, LAKES, make_warehouse
from tests.store.test_views_home import every_view
from warehouse.errors import SchemaError
from warehouse.ingest.runs import PreparedRun
from warehouse.store import lake as lake_module
from warehouse.store.connection import warehouse_exists
from warehouse.store.resources import schema_files
from warehouse.store.schema import (
    code_schema_version,
    init_warehouse,
    open_warehouse,
    staged_write,
)


def test_init_creates_every_core_table(new_db_path):
    status = init_warehouse(new_db_path)
    assert status.created and status.after == code_schema_version()
    con = duckdb.connect(str(new_db_path))
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


def test_older_warehouse_is_upgraded_in_order(new_db_path):
    con = duckdb.connect(str(new_db_path))
    first = schema_files()[0]
    con.execute(first.text)
    con.execute("INSERT INTO schema_version (version, tame_wh_version) VALUES (1, 'old')")
    con.close()
    status = init_warehouse(new_db_path)
    assert (status.before, status.after) == (1, code_schema_version())
    con = duckdb.connect(str(new_db_path))
    weight = con.execute(
        "SELECT weight FROM composite_weights "
        "WHERE profile = 'A' AND metric = 'fst_acceptance_rate'"
    ).fetchone()
    assert weight == (0.25,)


# The two tables schema version 20 rebuilt, as version 19 had them.
_VERSION_19 = {
    "exposures": """
        CREATE TABLE exposures (
            audit_id VARCHAR NOT NULL, seg_idx BIGINT NOT NULL,
            source_exposure DOUBLE NOT NULL, source_nn BIGINT, source_exact BOOLEAN NOT NULL,
            target_exposure DOUBLE NOT NULL, target_nn BIGINT, target_ref_idx INTEGER,
            target_exact BOOLEAN NOT NULL, pair_exposure DOUBLE NOT NULL, pair_nn BIGINT,
            pair_exact BOOLEAN NOT NULL, tm_hyp_idx BIGINT,
            bin VARCHAR NOT NULL CHECK (bin IN ('source_exact', 'near', 'medium', 'far')),
            PRIMARY KEY (audit_id, seg_idx))""",
    "run_bin_sums": """
        CREATE TABLE run_bin_sums (
            run_id VARCHAR NOT NULL, audit_id VARCHAR NOT NULL, bin VARCHAR NOT NULL,
            n_segments BIGINT NOT NULL, sum_source_exposure DOUBLE NOT NULL,
            bleu_stats BIGINT[] NOT NULL, chrf_stats BIGINT[] NOT NULL,
            tm_bleu_stats BIGINT[] NOT NULL, tm_chrf_stats BIGINT[] NOT NULL,
            PRIMARY KEY (run_id, audit_id, bin))""",
}


# The score columns that version 21 added to the stored sums.
_SCORES_21 = {
    "run_sums": ("bleu", "chrf_plus_plus", "ter"),
    "run_bin_sums": ("bleu", "chrf_plus_plus", "tm_bleu", "tm_chrf_plus_plus"),
}


def _back_to_version_20(con: duckdb.DuckDBPyConnection) -> None:
    """The warehouse as version 20 left it: stored sums without their scores."""
    for table, columns in _SCORES_21.items():
        for column in columns:
            con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("DELETE FROM schema_version WHERE version >= 21")


def test_version_20_gains_the_stored_scores_equal_to_the_macros_to_the_bit(demo_db):
    con = duckdb.connect(str(demo_db))
    tables = ("run_sums", "run_bin_sums", "run_surface", "run_bins", "run_exposure")
    before = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    scored = con.execute(
        "SELECT count(*) FILTER (WHERE bleu = bleu_score(bleu_stats) AND chrf_plus_plus = "
        "chrf_score(chrf_stats) AND tm_bleu IS NOT DISTINCT FROM bleu_score(tm_bleu_stats)), "
        "count(*) FROM run_bin_sums"
    ).fetchone()
    assert scored is not None and scored[0] == scored[1] > 0
    _back_to_version_20(con)
    con.close()
    status = init_warehouse(demo_db)
    assert (status.before, status.after) == (20, code_schema_version())
    con = duckdb.connect(str(demo_db))
    after = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    con.close()
    assert after == before


def _macros(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of the warehouse's own macros."""
    return {
        name
        for (name,) in con.execute(
            "SELECT function_name FROM duckdb_functions() WHERE NOT internal "
            "AND function_type IN ('macro', 'table_macro')"
        ).fetchall()
    }


def test_version_21_gets_the_cheaper_plans_drops_the_old_helpers_and_answers_the_same(demo_db):
    before = every_view(demo_db)
    con = duckdb.connect(str(demo_db))
    # Version 21 as it was: the helpers of the order-by-order BLEU and chrF++ macros, and no
    # view of the cost figures alone.
    con.execute("CREATE MACRO _bleu_missing(c, t) AS (t > 0 AND c = 0)::INTEGER")
    con.execute("CREATE MACRO _chrf_effective_order(s) AS len(s)")
    con.execute("DROP VIEW run_cost")
    con.execute("DROP VIEW run_cost_figures")
    con.execute("DELETE FROM schema_version WHERE version >= 22")
    con.close()
    status = init_warehouse(demo_db)
    assert (status.before, status.after) == (21, code_schema_version())
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        macros = _macros(con)
    finally:
        con.close()
    assert not {"_bleu_missing", "_chrf_effective_order"} & macros
    assert {"bleu_score", "chrf_score", "total_tokens", "cost_adjusted"} <= macros
    assert every_view(demo_db) == before


def test_version_19_keeps_every_exposure_and_sum_and_gains_target_sums(demo_db):
    db = demo_db
    con = duckdb.connect(str(db))
    tables = ("exposures", "run_bin_sums", "run_bins", "run_exposure", "audit_bins")
    before = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    assert before["exposures"] and before["run_bin_sums"]
    _back_to_version_20(con)
    # Back to version 19: its two tables (the sums without their target column).
    for table, ddl in _VERSION_19.items():
        columns = ", ".join(
            c for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                "AND column_name <> 'sum_target_exposure' ORDER BY column_index",
                [table],
            ).fetchall()
        )  # fmt: skip
        con.execute(f"CREATE TABLE kept AS SELECT {columns} FROM {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(ddl)
        con.execute(f"INSERT INTO {table} SELECT * FROM kept")
        con.execute("DROP TABLE kept")
    con.execute("DELETE FROM schema_version WHERE version >= 20")
    con.close()
    status = init_warehouse(db)
    assert (status.before, status.after) == (19, code_schema_version())
    con = duckdb.connect(str(db))
    after = {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    assert after == before
    # The new CHECK holds on the rebuilt table, and a NULL side is allowed.
    with pytest.raises(duckdb.ConstraintException):
        con.execute("UPDATE exposures SET bin = 'pair_exact' WHERE seg_idx = 0")
    con.execute(
        "UPDATE exposures SET source_exposure = NULL, bin = 'target_exact' WHERE seg_idx = 0"
    )


def test_warehouse_from_newer_code_is_refused(db_path):
    init_warehouse(db_path)
    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO schema_version (version, tame_wh_version) VALUES (999, '99.0.0')")
    con.close()
    with pytest.raises(SchemaError, match="newer tame-wh \\(schema version 999\\)"):
        open_warehouse(db_path)


def test_foreign_duckdb_file_is_refused(new_db_path):
    con = duckdb.connect(str(new_db_path))
    con.execute("CREATE TABLE mine (x INTEGER)")
    con.close()
    with pytest.raises(SchemaError, match="not a tame-wh warehouse"):
        open_warehouse(new_db_path)


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
    # An audit of the references alone bins by them; any other by the source.
    sides = con.execute(
        "SELECT side_bin(side, 0.1, false, 0.8, exact, 0.70, 0.30), exact_bin(side) "
        "FROM (VALUES ('target', false), ('target', true), ('source', true), ('both', true)) "
        "t(side, exact)"
    ).fetchall()
    assert sides == [("near", "target_exact"), ("target_exact", "target_exact"),
                     ("far", "source_exact"), ("far", "source_exact")]  # fmt: skip
    tm = con.execute(
        "SELECT tm_hypothesis('target', 'src', 'empty'), tm_hypothesis(NULL, 'src', 'source'), "
        "tm_hypothesis(NULL, 'src', 'empty')"
    ).fetchone()
    assert tm == ("target", "src", "")
    views = {v for (v,) in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    assert "run_stat_sums" not in views and "run_surface" in views


def _test_set(tmp_path, n: int = 12) -> tuple[Path, Path]:
    src = tmp_path / "src.txt"
    ref = tmp_path / "ref.txt"
    src.write_text("".join(f"sentence number {i}\n" for i in range(n)), encoding="utf-8")
    ref.write_text("".join(f"phrase numero {i}\n" for i in range(n)), encoding="utf-8")
    return src, ref


def test_a_lake_ingest_attaches_once_and_scores_while_others_may_write(lake, tmp_path, monkeypatch):
    src, ref = _test_set(tmp_path)
    assert lake.run("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    attaches: list[bool] = []
    real_attach = lake_module.attach

    def counted_attach(*args: Any, **kwargs: Any) -> None:
        attaches.append(kwargs["read_only"])
        real_attach(*args, **kwargs)

    # While the run is scored, another session can take the writers' lock at once.
    taken_while_scoring: list[bool] = []
    real_score = PreparedRun.score

    def score(self: PreparedRun) -> None:
        if taken_while_scoring:  # the write calls it again, a no-op once scored
            return real_score(self)
        with lake_module.catalog_session(lake.address) as pg:
            other = lake_module.WriterLock(pg)
            other.acquire(lake.address, 2)
            taken_while_scoring.append(other.held)
            other.release()
        real_score(self)

    monkeypatch.setattr(lake_module, "attach", counted_attach)
    monkeypatch.setattr(PreparedRun, "score", score)
    done = lake.run("ingest", "--testset", "ts", "--hyp", ref, "--model-slug", "m", "--json")
    assert done.exit_code == 0, done.output
    assert attaches == [False]  # one attach, a writer's
    assert taken_while_scoring == [True]
    assert lake.sql("SELECT count(*) FROM hypotheses") == [(12,)]


@pytest.mark.parametrize("new_lake", LAKES, indirect=True)  # the data path matters
def test_a_staged_write_creates_nothing_until_it_writes(new_lake, tmp_path):
    with staged_write(new_lake.address) as stage:
        assert stage.look is None
    assert not warehouse_exists(new_lake.address)
    with staged_write(new_lake.address) as stage, stage.writer() as con:
        con.execute("UPDATE settings SET value = 500 WHERE key = 'bootstrap.n'")
    with staged_write(new_lake.address) as stage:
        assert stage.look is not None
        rows = stage.look.execute("SELECT value FROM settings WHERE key = 'bootstrap.n'")
        assert rows.fetchall() == [(500,)]


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_tests_empty_warehouse_equals_a_newly_created_one(kind, tmp_path, monkeypatch):
    # Most tests start from a copy of a template (tests/backends.py) instead of creating the
    # schema: the copy must hold what `init` makes, and work where it is.
    (tmp_path / "copy").mkdir()
    (tmp_path / "made").mkdir()
    with ExitStack() as stack:
        copy = stack.enter_context(
            contextmanager(make_warehouse)(kind, tmp_path / "copy", monkeypatch, empty=True)
        )
        made = stack.enter_context(
            contextmanager(make_warehouse)(kind, tmp_path / "made", monkeypatch)
        )
        assert made.run("init").exit_code == 0
        views = "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY view_name"
        versions = "SELECT version, tame_wh_version FROM schema_version ORDER BY version"
        assert copy.sql(views) == made.sql(views) and len(copy.sql(views)) >= 10
        assert copy.sql(versions) == made.sql(versions)
        tables = {name: rows for name, rows in copy.tables().items() if name != "schema_version"}
        assert tables == {n: r for n, r in made.tables().items() if n != "schema_version"}
        doctor = json.loads(copy.run("doctor", "--json").stdout)
        assert (
            doctor["ok"] is True and doctor["warehouse"]["schema_version"] == code_schema_version()
        )
        if copy.is_lake:
            assert doctor["warehouse"]["data_path"] == copy.address.data_path
        upgrade = copy.run("init")
        assert upgrade.exit_code == 0 and "up to date" in upgrade.output
