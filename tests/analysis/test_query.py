"""`tame-wh query`: read-only SQL; hostile statements are refused before they run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cli.main import main
from tests.conftest import snapshot
from warehouse.analysis.query import run_query
from warehouse.errors import UsageError

HOSTILE = [
    "DROP TABLE runs",
    "DELETE FROM runs",
    "INSERT INTO settings VALUES ('x', 1, 'y')",
    "UPDATE settings SET value = 0",
    "CREATE TABLE stolen AS SELECT * FROM runs",
    "CREATE VIEW v AS SELECT 1",
    "CREATE MACRO evil() AS 1",
    "ALTER TABLE runs ADD COLUMN x INTEGER",
    "ATTACH '/tmp/other.duckdb' AS other",
    "DETACH other",
    "USE other",
    "COPY runs TO '/tmp/runs.csv'",
    "COPY (SELECT * FROM runs) TO '/tmp/runs.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '/tmp/export'",
    "IMPORT DATABASE '/tmp/export'",
    "PRAGMA database_list",
    "PRAGMA enable_profiling",
    "SET threads = 1",
    "RESET threads",
    "CALL pragma_version()",
    "BEGIN TRANSACTION",
    "COMMIT",
    "CHECKPOINT",
    "VACUUM",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT 1; DROP TABLE runs",
    "SELECT * FROM runs; DELETE FROM runs",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/hosts')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_json_auto('/etc/hosts')",
    "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM 's3://bucket/key.parquet'",
    "FROM read_csv('/etc/passwd')",
    "FROM '/etc/hosts' SELECT *",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM query('DELETE FROM runs')",
    "SELECT * FROM query_table('runs')",
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM postgres_scan('host=localhost', 'public', 't')",
    "SELECT * FROM sqlite_scan('/tmp/x.db', 't')",
    "SELECT getenv('HOME')",
    "SELECT * FROM pragma_table_info('runs')",
    "SELECT * FROM other.main.runs",
    "WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x",
    "SELECT (SELECT count(*) FROM read_text('/etc/passwd'))",
    "SELECT * FROM runs WHERE run_id IN (SELECT content FROM read_text('/etc/passwd'))",
    "SUMMARIZE runs",
    "",
]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    """One demo warehouse shared by the module (every test checks it stays unchanged)."""
    path = tmp_path_factory.mktemp("query") / "demo.duckdb"
    assert CliRunner().invoke(main, ["--db", str(path), "demo"]).exit_code == 0
    return path


@pytest.fixture(scope="module")
def demo_snapshot(demo_db):
    return snapshot(demo_db)


def test_at_least_thirty_hostile_statements_are_listed():
    assert len(HOSTILE) >= 30


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_statement_is_refused_and_changes_nothing(run_cli, demo_db, demo_snapshot, sql):
    result = run_cli("query", sql, db=demo_db)
    assert result.exit_code == 2, (sql, result.output)
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot(demo_db) == demo_snapshot


def test_select_with_macros_and_views_works(demo_db):
    result = run_query(
        demo_db,
        "SELECT model_slug, round(corpus_chrf(chrf_stats), 6) AS chrf FROM segment_stats "
        "JOIN runs USING (run_id) WHERE condition = 'zero-shot' GROUP BY ALL ORDER BY 1",
    )
    assert result.columns == ["model_slug", "chrf"]
    assert [r[0] for r in result.rows] == ["demo-large", "demo-small"]


def test_cyzil_functions_are_available_in_queries(demo_db):
    result = run_query(
        demo_db,
        "SELECT bleu_sentence(['a', 'b'], ['a', 'b'], 2), edit_distance_sentence(['a'], [])",
    )
    assert result.rows == [([1.0, 1.0, 1.0], 1)]


def test_from_first_and_with_queries_are_allowed(demo_db):
    assert run_query(demo_db, "FROM runs SELECT count(*)").rows == [(3,)]
    with_query = "WITH t AS (SELECT * FROM runs) SELECT count(*) FROM t"
    assert run_query(demo_db, with_query).rows == [(3,)]
    assert run_query(demo_db, "SELECT sum(i) FROM range(4) t(i)").rows == [(6,)]


def test_query_runs_on_a_connection_without_external_access(demo_db, monkeypatch):
    # Even if vetting let a file read through, the connection itself refuses it.
    monkeypatch.setattr("warehouse.analysis.query.vet_query", lambda _sql, _known: None)
    with pytest.raises(UsageError, match="query failed"):
        run_query(demo_db, "SELECT * FROM read_text('/etc/hostname')")
    with pytest.raises(UsageError, match="query failed"):
        run_query(demo_db, "DELETE FROM runs")


def test_query_output_formats(run_cli, demo_db):
    as_json = json.loads(
        run_cli(
            "query",
            "SELECT name, n_segments FROM corpora ORDER BY name",
            "--format",
            "json",
            db=demo_db,
        ).output
    )
    assert as_json == [
        {"name": "demo-test", "n_segments": 40},
        {"name": "demo-train", "n_segments": 251},
    ]
    as_csv = run_cli(
        "query", "SELECT name, n_segments FROM corpora ORDER BY name", "--format", "csv", db=demo_db
    ).output
    assert as_csv.splitlines() == ["name,n_segments", "demo-test,40", "demo-train,251"]
    table = run_cli("query", "SELECT 1 AS one", db=demo_db).output
    assert "one" in table


def test_query_errors_are_one_line(run_cli, demo_db):
    result = run_cli("query", "SELECT no_such_column FROM runs", db=demo_db)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: query failed:")
