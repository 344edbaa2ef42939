"""`tame-wh query` on a lake: it reads the lake with the data path its catalog records (none
needed on the command line), answers from one pinned snapshot, and DuckDB may open exactly that
snapshot's data and delete files: no statement reads a file planted in the data path, in a
table's directory, in the temporary directory or in the working directory, whatever CTE,
quoting or table-function trick names it."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tests.backends import LAKES, S3_ENDPOINT_ENV, Warehouse
from warehouse.analysis.query import (
    _LAKE_CONFIG,
    QueryLimits,
    _known_relations,
    _lock_down_lake,
    vet_query,
)
from warehouse.cli.main import main
from warehouse.errors import UsageError
from warehouse.store.address import DATA_PATH_ENV_VAR, parse_address
from warehouse.store.connection import close_connection, connect
from warehouse.store.lake import AsOf, pin_snapshot

MARKER = "planted-secret-7f3a"

# Statements that name a file ({p}); each must be refused or read nothing of it.
HOSTILE = (
    "SELECT * FROM '{p}'",
    'SELECT * FROM "{p}"',
    "FROM '{p}'",
    "SELECT * FROM '{p}' AS x",
    'WITH RECURSIVE "{p}" AS (SELECT * FROM "{p}") SELECT * FROM "{p}"',
    'WITH RECURSIVE "{p}" AS (SELECT * FROM "{p}" UNION SELECT * FROM "{p}") SELECT * FROM "{p}"',
    'WITH RECURSIVE x AS (SELECT * FROM "{p}") SELECT * FROM x',
    'WITH "{p}" AS (SELECT * FROM "{p}") SELECT * FROM "{p}"',
    'SELECT * FROM (WITH "{p}" AS (SELECT 1 AS a) SELECT 1) , "{p}"',
    "SELECT * FROM read_csv('{p}')",
    "SELECT * FROM read_parquet('{p}')",
    "SELECT * FROM parquet_scan('{p}')",
    "SELECT * FROM read_text('{p}')",
    "SELECT * FROM query_table('{p}')",
    "SELECT * FROM glob('{p}')",
    "DESCRIBE '{p}'",
    "SUMMARIZE '{p}'",
    "SELECT * FROM runs, '{p}'",
    "SELECT (SELECT count(*) FROM '{p}')",
)


def _cli(db: str, *args: str) -> object:
    return CliRunner().invoke(main, ["--db", db, *args])


@pytest.fixture
def no_data_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Later commands name the lake by its catalog alone."""
    monkeypatch.delenv(DATA_PATH_ENV_VAR, raising=False)


@pytest.mark.parametrize("demo_lake", LAKES, indirect=True)  # the data path matters
def test_query_reads_a_lake_with_the_data_path_its_catalog_records(demo_lake, no_data_path):
    lake = demo_lake
    board = _cli(lake.db, "query", "FROM leaderboard", "--json")
    assert board.exit_code == 0, board.output
    assert len(json.loads(board.stdout)) == 3
    table = _cli(lake.db, "query", "SELECT model_slug FROM leaderboard ORDER BY 1")
    assert table.exit_code == 0 and "demo-large" in table.output
    snapshot = lake.sql("SELECT max(snapshot_id) FROM ducklake_snapshots('tame')")[0][0]
    then = _cli(lake.db, "query", "SELECT count(*) AS n FROM runs", "--json", "--as-of", "1")
    assert then.exit_code == 0 and json.loads(then.stdout) == [{"n": 0}]
    now = _cli(
        lake.db, "query", "SELECT count(*) AS n FROM runs", "--json", "--as-of", str(snapshot)
    )
    assert now.exit_code == 0 and json.loads(now.stdout) == [{"n": 3}]
    missing = _cli(lake.db, "query", "SELECT 1", "--as-of", str(snapshot + 100))
    assert missing.exit_code == 2 and "no such snapshot" in missing.output


def _listed_by_ducklake(lake: Warehouse, snapshot: int) -> set[str]:
    """Every data and delete file of every table at a snapshot, as DuckLake lists them."""
    con = connect(lake.address, read_only=True, as_of=AsOf(snapshot=snapshot))
    try:
        tables = [r[0] for r in con.execute("SHOW TABLES").fetchall()]
        files: set[str] = set()
        for table in tables:
            for data, delete in con.execute(
                "SELECT data_file, delete_file FROM ducklake_list_files('tame', ?, "
                "snapshot_version => ?)",
                [table, snapshot],
            ).fetchall():
                files |= {f for f in (data, delete) if f}
        return files
    finally:
        close_connection(con)


@pytest.mark.parametrize("demo_lake", LAKES, indirect=True)  # the data path matters
def test_the_pinned_files_are_the_files_ducklake_lists_for_that_snapshot(demo_lake):
    lake = demo_lake
    first = pin_snapshot(lake.address)
    assert first.files and set(first.files) == _listed_by_ducklake(lake, first.snapshot)
    run = lake.sql("SELECT run_id FROM runs ORDER BY run_id LIMIT 1")[0][0]
    assert lake.run("runs", "delete", run, "--yes").exit_code == 0
    deleted = pin_snapshot(lake.address)
    assert deleted.snapshot > first.snapshot
    assert set(deleted.files) == _listed_by_ducklake(lake, deleted.snapshot)
    assert pin_snapshot(lake.address, AsOf(snapshot=first.snapshot)) == first
    # Merged files and expired snapshots: the latest snapshot's files, as DuckLake lists them.
    assert lake.run("lake", "maintain", "--keep-days", "0", "--grace-hours", "0").exit_code == 0
    merged = pin_snapshot(lake.address)
    assert set(merged.files) == _listed_by_ducklake(lake, merged.snapshot)


def _plant_directory(root: Path) -> list[str]:
    """A CSV and a Parquet file holding MARKER under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    csv = root / "planted.csv"
    csv.write_text(f"secret\n{MARKER}\n", encoding="utf-8")
    parquet = root / "planted.parquet"
    pq.write_table(pa.table({"secret": [MARKER]}), parquet)
    return [str(csv), str(parquet)]


def _plant_s3(lake: Warehouse, prefix: str) -> list[str]:
    """The same two files as objects under an s3:// prefix of the lake's bucket."""
    import io
    import os

    import boto3

    bucket, _, key = prefix.removeprefix("s3://").partition("/")
    client = boto3.client(
        "s3",
        endpoint_url=os.environ[S3_ENDPOINT_ENV],
        aws_access_key_id=lake.env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=lake.env["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    )
    client.put_object(Bucket=bucket, Key=key + "planted.csv", Body=f"secret\n{MARKER}\n".encode())
    buffer = io.BytesIO()
    pq.write_table(pa.table({"secret": [MARKER]}), buffer)
    client.put_object(Bucket=bucket, Key=key + "planted.parquet", Body=buffer.getvalue())
    return [prefix + "planted.csv", prefix + "planted.parquet"]


def _planted(lake: Warehouse, tmp_path: Path) -> list[str]:
    """Files holding MARKER in the data path, in a table's directory, in `./.tmp/` (DuckDB's
    temporary directory for in-memory databases) and in the working directory."""
    data_path = lake.data_path.rstrip("/") + "/"
    here = [*_plant_directory(tmp_path / ".tmp"), *_plant_directory(tmp_path)]
    if lake.kind == "lake-s3":
        return [*_plant_s3(lake, data_path), *_plant_s3(lake, data_path + "main/runs/"), *here]
    return [
        *_plant_directory(Path(data_path)),
        *_plant_directory(Path(data_path) / "main" / "runs"),
        *here,
    ]


@pytest.mark.parametrize("demo_lake", LAKES, indirect=True)  # the data path matters
def test_no_statement_reads_a_planted_file(demo_lake, tmp_path, monkeypatch, no_data_path):
    lake = demo_lake
    monkeypatch.chdir(tmp_path)
    planted = _planted(lake, tmp_path)
    # Every statement against the vet, with every planted path: refused before anything runs.
    con = connect(parse_address(lake.db, use_env=False), read_only=True)
    try:
        known = _known_relations(con)
    finally:
        close_connection(con)
    for path in planted:
        for template in HOSTILE:
            with pytest.raises(UsageError):
                vet_query(template.format(p=path), known)
    # End to end through the CLI: each kind of trick once, on a file in the data path and one in
    # a table's folder (DuckLake's own directories: the ones the lake's connection must reach).
    in_lake = [p for p in planted if "/main/runs/" in p][:1] + [
        p for p in planted if "/main/" not in p and p.startswith(lake.data_path.rstrip("/"))
    ][:1]
    assert len(in_lake) == 2
    for path in in_lake:
        for template in HOSTILE[:8]:
            sql = template.format(p=path)
            result = _cli(lake.db, "query", sql, "--json")
            assert result.exit_code == 2, (sql, result.output)
            assert MARKER not in result.output, sql


@pytest.mark.parametrize("demo_lake", LAKES, indirect=True)  # the data path matters
def test_the_locked_down_connection_opens_no_planted_file_even_unvetted(
    demo_lake, tmp_path, monkeypatch
):
    # The second fence alone: a statement that got past the vet still cannot open a file.
    lake = demo_lake
    monkeypatch.chdir(tmp_path)
    planted = _planted(lake, tmp_path)
    address = parse_address(lake.db, use_env=False)
    pinned = pin_snapshot(address)
    con = connect(
        address, read_only=True, config=_LAKE_CONFIG, as_of=AsOf(snapshot=pinned.snapshot)
    )
    try:
        _lock_down_lake(con, pinned.files, QueryLimits(timeout=30, memory_mb=512))
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (3,)
        assert con.execute("SELECT count(*) FROM leaderboard").fetchone() == (3,)
        for path in planted:
            for sql in (f"FROM '{path}'", f"FROM read_text('{path}')"):
                with pytest.raises(duckdb.Error, match=r"(?i)permission|disabled|not allowed"):
                    con.execute(sql).fetchall()
        with pytest.raises(duckdb.Error):
            con.execute("SET allowed_directories = ['/']")
    finally:
        close_connection(con)


@pytest.mark.parametrize("demo_warehouse", ["lake-s3"], indirect=True)
def test_an_emptied_bucket_is_a_service_fault_for_query_as_for_every_command(
    demo_warehouse: Warehouse,
):
    import os

    import boto3

    assert demo_warehouse.data_path is not None
    bucket, _, prefix = demo_warehouse.data_path.removeprefix("s3://").partition("/")
    client = boto3.client(
        "s3",
        endpoint_url=os.environ[S3_ENDPOINT_ENV],
        region_name="us-east-1",
        aws_access_key_id="tame-test-key",
        aws_secret_access_key="unused",
    )
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    assert listed, "the demo lake keeps data files in its bucket"
    for found in listed:
        client.delete_object(Bucket=bucket, Key=found["Key"])
    # A table whose rows are in those files (small tables' rows may be inlined in the catalog).
    table = next(k["Key"].split("/")[-2] for k in listed if k["Key"].endswith(".parquet"))
    for args in (["query", f"SELECT count(*) AS n FROM {table}"], ["export", "demo-large"]):
        done = demo_warehouse.run(*args)
        assert done.exit_code == 4, (args, done.output)
        assert "lake data path (object store" in done.stderr, done.stderr
