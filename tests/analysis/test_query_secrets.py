"""`tame-wh query` tells no secret and no configuration, on a file, a directory lake and an S3
lake: with canary credentials in the environment (and a canary value in the lake address), every
form that could show a setting, a secret, a variable or the environment is refused (exit 2) and no
output carries a canary; and the query's own connection holds no credential in its settings even
when a statement gets past the vet."""

from __future__ import annotations

import os

import pytest

from tests.backends import BACKENDS, make_warehouse
from warehouse.analysis.query import run_query
from warehouse.store.address import parse_address

KEY_ID = "CANARYKEYID7Q"
SECRET = "canary-secret-9f1c2e"
NAME = "canary-app-5d"

# Every form that names a setting, a secret, a variable, the environment or the attached
# databases: functions, method calls, lambdas, table functions, internal views, the PostgreSQL
# and information_schema views, SHOW, PRAGMA, CALL, CTE and subquery wrappings, DESCRIBE and
# SUMMARIZE of a query, and SQL run by SQL.
FORMS = (
    "SELECT current_setting('s3_secret_access_key')",
    "SELECT current_setting('s3_access_key_id') AS i",
    "SELECT current_setting('allowed_paths')",
    "SELECT CURRENT_SETTING('S3_SECRET_ACCESS_KEY')",
    "SELECT \"current_setting\"('allowed_paths')",
    "SELECT system.main.current_setting('allowed_paths')",
    "SELECT ('s3_secret_access_key').current_setting()",
    "SELECT list_transform(['s3_secret_access_key'], x -> current_setting(x))",
    "SELECT [x.current_setting() FOR x IN ['allowed_paths']]",
    "SELECT * FROM runs WHERE current_setting('s3_secret_access_key') LIKE 'c%'",
    "SELECT (SELECT current_setting('s3_secret_access_key'))",
    "WITH s AS (SELECT current_setting('s3_secret_access_key') AS v) SELECT * FROM s",
    "WITH RECURSIVE t AS (SELECT current_setting('allowed_paths') AS v UNION SELECT v FROM t) "
    "SELECT * FROM t",
    "DESCRIBE SELECT current_setting('s3_secret_access_key') AS k",
    "SUMMARIZE SELECT current_setting('s3_secret_access_key') AS k",
    "SELECT * FROM duckdb_settings()",
    "FROM duckdb_settings()",
    "SELECT value FROM duckdb_settings() WHERE name LIKE 's3%'",
    "SELECT * FROM (FROM duckdb_settings())",
    "WITH duckdb_settings AS (SELECT 1 AS x) SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM duckdb_secrets(redact => false)",
    "SELECT * FROM which_secret('s3://bucket/key', 's3')",
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM duckdb_databases",
    "SELECT * FROM duckdb_extensions()",
    "SELECT * FROM duckdb_variables()",
    "SELECT * FROM duckdb_logs",
    "SELECT getvariable('tame_lake_catalog_schema')",
    "SELECT getenv('AWS_SECRET_ACCESS_KEY')",
    "SELECT * FROM pg_settings",
    "SELECT * FROM pg_catalog.pg_settings",
    "SELECT * FROM pg_catalog.pg_database",
    "SELECT * FROM information_schema.pg_settings",
    "SELECT * FROM information_schema.duckdb_settings",
    'SELECT * FROM information_schema."x.csv"',
    "SELECT * FROM pragma_database_list",
    "SELECT * FROM sqlite_master",
    "SELECT * FROM pragma_show('runs')",
    "SHOW s3_secret_access_key",
    "PRAGMA database_list",
    "PRAGMA version",
    "CALL duckdb_settings()",
    "EXPLAIN SELECT current_setting('allowed_paths')",
    "SELECT json_serialize_plan('SELECT current_setting(''allowed_paths'')')",
    "SELECT * FROM json_execute_serialized_sql("
    "json_serialize_sql('SELECT current_setting(''allowed_paths'') AS p'))",
    "SELECT * FROM query('SELECT current_setting(''allowed_paths'')')",
    "SET lock_configuration = false",
)


@pytest.fixture(params=BACKENDS)
def planted(request, tmp_path, monkeypatch):
    """The demo on each backend, canary S3 credentials in the environment and, for a lake, a
    canary value (one messages mask) in its address."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    # An S3 lake sets the test server's credentials (its secret key fresh: a canary too).
    for made in make_warehouse(request.param, tmp_path, monkeypatch, demo=True):
        if made.is_lake:
            made.db = f"{made.db} application_name={NAME}"
        monkeypatch.delenv("TAME_WH_DATA_PATH", raising=False)
        yield made


def _canaries() -> list[str]:
    return [os.environ["AWS_SECRET_ACCESS_KEY"], os.environ["AWS_ACCESS_KEY_ID"], NAME]


def test_at_least_forty_forms_are_tried():
    assert len(FORMS) >= 40


def test_no_form_shows_a_secret_or_the_configuration(planted, run_cli):
    canaries = _canaries()
    # The vet is the same on every backend: a lake (each command opens its catalog) tries every
    # third form, among them each kind; a file tries them all.
    for sql in FORMS if not planted.is_lake else FORMS[::3]:
        result = run_cli("query", sql, "--json", db=planted.db)
        assert result.exit_code == 2, (sql, result.output)
        assert result.stderr.startswith("error: "), (sql, result.stderr)
        for canary in canaries:
            assert canary not in result.output, (sql, result.output)


def test_the_allowed_catalog_views_answer_without_a_secret(planted, run_cli):
    canaries = _canaries()
    for view in ("tables", "columns", "schemata", "views"):
        sql = f"SELECT * FROM information_schema.{view}"
        result = run_cli("query", sql, "--json", db=planted.db)
        assert result.exit_code == 0, (view, result.output)
        assert '"runs"' in result.output or view in ("schemata", "views")
        for canary in canaries:
            assert canary not in result.output, view


def test_the_query_connection_holds_no_credential_in_its_settings(planted, monkeypatch):
    # The second fence: past the vet, every setting of the locked-down connection is free of
    # the S3 credentials (they live only in the connection's secret).
    monkeypatch.setattr("warehouse.analysis.query.vet_query", lambda _sql, _known: None)
    rows = run_query(
        parse_address(planted.db, use_env=False) if planted.is_lake else planted.db,
        # (the temporary directory's size asks the disabled local file system for free space)
        "SELECT name, value FROM duckdb_settings() WHERE name <> 'max_temp_directory_size'",
    ).rows
    assert len(rows) > 100
    text = "\n".join(f"{name}={value}" for name, value in rows)
    assert os.environ["AWS_SECRET_ACCESS_KEY"] not in text
    assert os.environ["AWS_ACCESS_KEY_ID"] not in text
    if not planted.is_lake:
        return  # a file's connection has no secret (and may not list the persistent ones)
    secrets = run_query(
        parse_address(planted.db, use_env=False) if planted.is_lake else planted.db,
        "SELECT secret_string FROM duckdb_secrets()",
    ).rows
    assert all(os.environ["AWS_SECRET_ACCESS_KEY"] not in row[0] for row in secrets)
