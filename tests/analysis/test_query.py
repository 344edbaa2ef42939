"""`tame-wh query`: read-only SQL; hostile statements are refused before they run."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests.backends import TEMPLATES
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
    "",
]


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    """One demo warehouse shared by the module (every test checks it stays unchanged)."""
    path = tmp_path_factory.mktemp("query") / "demo.duckdb"
    TEMPLATES.copy_demo_file(path)
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
        "SELECT bleu_sentence(['a', 'b'], ['a', 'b'], 2), EDIT_Distance_sentence(['a'], [])",
    )
    assert result.rows == [([1.0, 1.0, 1.0], 1)]


def test_cyzil_functions_are_registered_only_for_a_query_that_names_them(demo_db, monkeypatch):
    import warehouse.analysis.query as query

    registered = []
    real = query.register_cyzil_functions
    monkeypatch.setattr(query, "register_cyzil_functions", lambda con: registered.append(real(con)))
    assert run_query(demo_db, "SELECT count(*) FROM runs").rows == [(3,)]
    assert registered == []
    assert run_query(demo_db, "SELECT Edit_Distance_Sentence(['a'], ['b'])").rows == [(1,)]
    assert len(registered) == 1


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


# --- The table check follows CTE scope; file access is closed at the file-system level too ---

# A marker file next to the warehouse and in its temporary directory (`<db>.tmp/`), the two
# places DuckDB lets a connection without external access read by default. `{tmp}` and `{dir}`
# are filled with those folders. Every statement below must be refused by the vet.
FILE_MARKER = "tame-wh-marker-do-not-print"
SCOPE_ESCAPES = [
    # a CTE named like a file, defined in one scope and read in another
    'SELECT * FROM (WITH "{tmp}/x.csv" AS (SELECT 1) SELECT 1), "{tmp}/x.csv"',
    'SELECT * FROM (WITH "{dir}/x.csv" AS (SELECT 1) SELECT 1) JOIN "{dir}/x.csv" ON true',
    'SELECT (WITH "{tmp}/x.csv" AS (SELECT 1) SELECT 1), * FROM "{tmp}/x.csv"',
    'SELECT * FROM "{tmp}/x.csv" WHERE EXISTS (WITH "{tmp}/x.csv" AS (SELECT 1) SELECT 1)',
    'WITH a AS (SELECT * FROM "{tmp}/x.csv"), "{tmp}/x.csv" AS (SELECT 1) SELECT * FROM a',
    'WITH a AS (SELECT * FROM "{tmp}/x.csv") SELECT * FROM a',
    'SELECT 1 UNION ALL (WITH "{tmp}/x.csv" AS (SELECT 1) SELECT 1) UNION ALL FROM "{tmp}/x.csv"',
    '(WITH "{tmp}/x.csv" AS (SELECT 1) SELECT 1) UNION ALL SELECT * FROM "{tmp}/x.csv"',
    'WITH x AS (SELECT 1) SELECT * FROM x, (SELECT * FROM "{tmp}/x.csv")',
    'WITH "{tmp}/x.csv" AS (SELECT * FROM "{tmp}/x.csv") SELECT * FROM "{tmp}/x.csv"',
    'SELECT * FROM runs WHERE run_id IN (WITH "{dir}/x.csv" AS (SELECT 1) SELECT 1) '
    'OR run_id IN (FROM "{dir}/x.csv")',
    'SELECT * FROM LATERAL (SELECT * FROM "{tmp}/x.csv")',
    # a recursive CTE whose body DuckDB does not recurse through: its name is the file there
    'WITH RECURSIVE "{tmp}/x.csv" AS (SELECT 1 AS secret UNION BY NAME '
    'SELECT * FROM "{tmp}/x.csv") FROM "{tmp}/x.csv"',
    'WITH RECURSIVE "{dir}/x.csv" AS (SELECT 1 AS secret UNION ALL BY NAME '
    'SELECT * FROM "{dir}/x.csv") FROM "{dir}/x.csv"',
    'WITH RECURSIVE "{tmp}/x.csv" AS (SELECT 1 AS secret EXCEPT SELECT * FROM "{tmp}/x.csv") '
    'FROM "{tmp}/x.csv"',
    'WITH RECURSIVE "{tmp}/x.csv" AS (SELECT 1 AS secret UNION SELECT * FROM "{tmp}/x.csv" '
    'UNION SELECT 2) FROM "{tmp}/x.csv"',
    # names under information_schema that are not its views
    'SELECT * FROM information_schema."{tmp}/x.csv"',
    "SELECT * FROM information_schema.duckdb_settings",
    # files as strings, table functions, anywhere
    "SELECT * FROM '{tmp}/x.csv'",
    "SELECT (SELECT count(*) FROM '{dir}/x.csv')",
    "SELECT * FROM read_csv('{tmp}/x.csv')",
    "SELECT * FROM read_csv_auto('{dir}/x.csv')",
    "SELECT * FROM read_parquet('{dir}/x.parquet')",
    "SELECT * FROM read_json('{dir}/x.json')",
    "SELECT * FROM read_text('{tmp}/x.csv')",
    "SELECT * FROM glob('{dir}/*')",
    "SELECT (SELECT content FROM read_text('{tmp}/x.csv'))",
    "SELECT * FROM runs WHERE EXISTS (SELECT * FROM read_blob('{tmp}/x.csv'))",
    "DESCRIBE '{tmp}/x.csv'",
    "DESCRIBE SELECT * FROM read_csv('{tmp}/x.csv')",
    "SUMMARIZE '{tmp}/x.csv'",
    "SUMMARIZE SELECT * FROM '{dir}/x.csv'",
    "DESCRIBE other.main.runs",
    # statements that are not a query
    "COPY runs TO '{tmp}/out.csv'",
    "COPY (SELECT 1) TO '{dir}/out.parquet' (FORMAT parquet)",
    "ATTACH '{dir}/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD '{dir}/evil.duckdb_extension'",
    "PRAGMA show_tables",
    "SET temp_directory = '{dir}'",
    "SET enable_external_access = true",
    "SHOW DATABASES",
    "EXPLAIN SELECT 1",
]


@pytest.fixture(scope="module")
def marked_db(demo_db):
    """The demo warehouse with marker files where a replacement scan could find them."""
    folder = demo_db.parent
    tmp = folder / f"{demo_db.name}.tmp"
    tmp.mkdir(exist_ok=True)
    for where in (tmp, folder):
        (where / "x.csv").write_text(f"secret\n{FILE_MARKER}\n")
        (where / "x.json").write_text(f'{{"secret": "{FILE_MARKER}"}}\n')
    return demo_db, {"tmp": str(tmp), "dir": str(folder), "db": str(demo_db)}


def test_at_least_thirty_scope_and_file_escapes_are_listed():
    assert len(SCOPE_ESCAPES) >= 30


@pytest.mark.parametrize("template", SCOPE_ESCAPES)
def test_scope_and_file_escape_is_refused(run_cli, marked_db, demo_snapshot, template):
    db, places = marked_db
    sql = template.format(**places)
    result = run_cli("query", sql, db=db)
    assert result.exit_code == 2, (sql, result.output)
    assert FILE_MARKER not in result.output + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot(db) == demo_snapshot


def test_the_vet_alone_refuses_every_escape(marked_db):
    # The first fence on its own, without DuckDB's file lock-down behind it.
    from warehouse.analysis.query import _known_relations, vet_query
    from warehouse.store.connection import close_connection, connect

    db, places = marked_db
    con = connect(db, read_only=True)
    try:
        known = _known_relations(con)
    finally:
        close_connection(con)
    for template in SCOPE_ESCAPES:
        with pytest.raises(UsageError):
            vet_query(template.format(**places), known)


@pytest.mark.parametrize(
    "template",
    [
        'SELECT * FROM "{tmp}/x.csv"',
        'SELECT * FROM "{dir}/x.csv"',
        "SELECT * FROM '{tmp}/x.csv'",
        "SELECT * FROM read_csv('{dir}/x.csv')",
        "SELECT * FROM read_text('{tmp}/x.csv')",
        "SELECT * FROM read_json_auto('{dir}/x.json')",
        "SELECT * FROM glob('{tmp}/*')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM read_blob('{db}')",
        "SELECT * FROM read_text('{db}.wal')",
        "SELECT * FROM glob('{db}*')",
    ],
)
def test_the_connection_itself_cannot_read_files(marked_db, monkeypatch, template):
    # Even if the vet let a file read through, the connection refuses it: no local file system,
    # no temporary directory (DuckDB allows a connection without external access to read it).
    db, places = marked_db
    monkeypatch.setattr("warehouse.analysis.query.vet_query", lambda _sql, _known: None)
    with pytest.raises(UsageError, match="query failed") as info:
        run_query(db, template.format(**places))
    assert FILE_MARKER not in str(info.value)


@pytest.mark.parametrize(
    "sql",
    [
        "SET memory_limit = '100GB'",
        "SET disabled_filesystems = ''",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "RESET memory_limit",
    ],
)
def test_the_connection_configuration_is_locked(demo_db, monkeypatch, sql):
    monkeypatch.setattr("warehouse.analysis.query.vet_query", lambda _sql, _known: None)
    with pytest.raises(UsageError, match="query failed"):
        run_query(demo_db, sql)


@pytest.mark.parametrize(
    ("sql", "rows"),
    [
        ("WITH a AS (SELECT 1 AS v), b AS (SELECT v + 1 AS v FROM a) SELECT v FROM b", [(2,)]),
        ("WITH a AS (SELECT 2 AS v) SELECT (SELECT v FROM a) + (FROM a SELECT v)", [(4,)]),
        ("WITH a AS (SELECT 3 AS v) SELECT * FROM (SELECT v FROM a) JOIN a USING (v)", [(3,)]),
        (
            "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) "
            "SELECT sum(n) FROM t",
            [(15,)],
        ),
        ("SELECT * FROM (WITH runs AS (SELECT 1 AS x) SELECT x FROM runs)", [(1,)]),
        ("SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'", [(1,)]),
    ],
)
def test_ctes_in_scope_work(demo_db, sql, rows):
    assert run_query(demo_db, sql).rows == rows


# --- Explorable: SHOW TABLES, DESCRIBE, SUMMARIZE ---


def test_show_tables_describe_and_summarize(demo_db):
    tables = {r[0] for r in run_query(demo_db, "SHOW TABLES").rows}
    assert {"runs", "leaderboard", "settings"} <= tables
    assert run_query(demo_db, "show all tables").rows
    described = run_query(demo_db, "DESCRIBE runs")
    assert "run_id" in {r[0] for r in described.rows}
    assert run_query(demo_db, "DESCRIBE SELECT 1 AS one").rows[0][0] == "one"
    summary = run_query(demo_db, "SUMMARIZE corpora")
    assert "column_name" in summary.columns and summary.rows
    assert run_query(demo_db, "SUMMARIZE SELECT n_segments FROM corpora").rows[0][0] == "n_segments"


# --- Bounded: time and memory limits ---


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
        "SELECT sum(i) FROM range(1000000000000) t(i)",
        "SELECT count(*) FROM range(100000000) a(i), range(100000000) b(j)",
    ],
)
def test_runaway_statement_stops_at_the_time_limit(run_cli, demo_db, sql):
    started = time.monotonic()
    result = run_cli("query", sql, "--timeout", "1.5", db=demo_db)
    assert result.exit_code == 2
    assert "query stopped after its time limit of 1.5 s" in result.stderr
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT length(repeat('x', 2147483647))",
        "SELECT count(*) FROM (SELECT i::VARCHAR AS s FROM range(20000000) t(i) ORDER BY s)",
        "SELECT count(DISTINCT i::VARCHAR) FROM range(20000000) t(i)",
        "SELECT length(list(i)) FROM range(50000000) t(i)",
    ],
)
def test_memory_hungry_statement_stops_at_the_memory_limit(run_cli, demo_db, sql):
    result = run_cli("query", sql, "--memory-limit", "128MB", db=demo_db)
    assert result.exit_code == 2, result.output
    assert "query needed more than its memory limit of 128 MB" in result.stderr


def test_a_two_gigabyte_string_is_refused_by_default(run_cli, demo_db):
    result = run_cli("query", "SELECT length(repeat('x', 2147483647))", db=demo_db)
    assert result.exit_code == 2 and "memory limit of 1024 MB" in result.stderr


def test_limits_default_to_the_settings_rows(run_cli, demo_db, tmp_path):
    db = tmp_path / "limits.duckdb"
    shutil.copyfile(demo_db, db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE settings SET value = 1 WHERE key = 'query.timeout_seconds'")
    con.execute("UPDATE settings SET value = 96 WHERE key = 'query.memory_limit_mb'")
    con.close()
    slow = run_cli("query", "SELECT sum(i) FROM range(1000000000000) t(i)", db=db)
    assert slow.exit_code == 2 and "time limit of 1 s" in slow.stderr
    # The memory limit from its row; the time limit raised, so that a busy machine cannot reach it
    # first.
    big = run_cli(
        "query", "SELECT length(list(i)) FROM range(50000000) t(i)", "--timeout", "120", db=db
    )
    assert big.exit_code == 2 and "memory limit of 96 MB" in big.stderr, big.stderr
    # Options override the settings.
    fine = run_cli("query", "SELECT count(*) FROM range(10)", "--timeout", "30", db=db)
    assert fine.exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--timeout", "0"], "Invalid value for '--timeout'"),
        (["--timeout", "-1"], "Invalid value for '--timeout'"),
        (["--timeout", "1e9"], "the time limit must be in"),
        (["--memory-limit", "1KB"], "at least 64 MB"),
        (["--memory-limit", "lots"], "give a size such as"),
        (["--memory-limit", "-5GB"], "give a size such as"),
        (["--format", "parquet"], "give --out FILE"),
        (["--out", "x.csv"], "give --format"),
    ],
)
def test_bad_limit_and_output_options_are_usage_errors(run_cli, demo_db, args, message):
    result = run_cli("query", "SELECT 1", *args, db=demo_db)
    assert result.exit_code == 2 and message in result.output + result.stderr


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT '\udcff\udcfe'", "not valid UTF-8"),
        ("SELECT " + "(" * 3000 + "1" + ")" * 3000, "nested too deeply"),
        ("SELECT " + "[" * 3000 + "1" + "]" * 3000, ""),
    ],
)
def test_hostile_sql_text_is_a_clear_error(run_cli, demo_db, sql, message):
    result = run_cli("query", sql, db=demo_db)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "internal error" not in result.stderr


# --- Exports written by tame-wh ---


def test_exports_equal_the_printed_result(run_cli, demo_db, tmp_path):
    sql = "SELECT name, n_segments FROM corpora ORDER BY name"
    printed = json.loads(run_cli("query", sql, "--format", "json", db=demo_db).stdout)
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"corpora.{fmt}"
        result = run_cli("query", sql, "--format", fmt, "--out", out, db=demo_db)
        assert result.exit_code == 0 and result.stdout == ""
        assert f"wrote 2 rows to {out}" in result.stderr
        if fmt == "json":
            assert json.loads(out.read_text()) == printed
        elif fmt == "csv":
            assert out.read_text().splitlines() == [
                "name,n_segments",
                "demo-test,40",
                "demo-train,251",
            ]
        else:
            assert pq.read_table(out).to_pylist() == printed


def test_a_failed_export_leaves_no_file_and_never_the_warehouse(run_cli, demo_db, tmp_path):
    out = tmp_path / "slow.csv"
    result = run_cli(
        "query", "SELECT sum(i) FROM range(1000000000000) t(i)", "--format", "csv",
        "--out", out, "--timeout", "1", db=demo_db,
    )  # fmt: skip
    assert result.exit_code == 2 and not out.exists() and list(tmp_path.iterdir()) == []
    for target in (demo_db, Path(f"{demo_db}.wal")):
        clobber = run_cli("query", "SELECT 1", "--format", "csv", "--out", target, db=demo_db)
        assert clobber.exit_code == 2 and "the warehouse itself" in clobber.stderr
    interval = run_cli(
        "query", "SELECT INTERVAL 1 DAY AS d", "--format", "parquet", "--out", out, db=demo_db
    )
    assert interval.exit_code == 2 and "cast that column" in interval.stderr and not out.exists()


def test_the_query_connection_allows_no_directory_and_no_spilling(demo_db, monkeypatch):
    # The settings are read past the vet (which refuses current_setting).
    monkeypatch.setattr("warehouse.analysis.query.vet_query", lambda _sql, _known: None)
    [row] = run_query(
        demo_db,
        "SELECT current_setting('allowed_directories'), current_setting('allowed_paths'), "
        "current_setting('temp_directory'), current_setting('enable_external_access'), "
        "current_setting('lock_configuration')",
    ).rows
    directories, paths, temp, external, locked = row
    assert (directories, temp, external, locked) == ([], "", False, True)
    # DuckDB keeps the warehouse's own files on the allow-list; they are not readable either
    # (test_the_connection_itself_cannot_read_files), the local file system being disabled.
    assert {Path(p).name for p in paths} <= {
        f"{demo_db.name}{suffix}" for suffix in ("", ".wal", ".wal.checkpoint", ".wal.recovery")
    }


def test_a_wide_result_written_as_parquet_stays_within_a_small_memory_limit(
    run_cli, demo_db, tmp_path
):
    # The leaderboard's 81 columns once reserved more than 1 GB for its Arrow buffers.
    for limit in ((), ("--memory-limit", "100MB")):
        out = tmp_path / "lb.parquet"
        done = run_cli("query", "FROM leaderboard", "--format", "parquet", "--out", out, *limit,
                       db=demo_db)  # fmt: skip
        assert done.exit_code == 0, done.output
        table = pq.read_table(out)
        assert table.num_rows == 3 and table.num_columns > 80
        out.unlink()
