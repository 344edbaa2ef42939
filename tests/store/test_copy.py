"""`tame-wh copy` between a local file and a lake, both ways, and `tame-wh lake maintain`: the
round trip local → lake → local answers every table and view query byte for byte as the
original; maintenance keeps the data and drops only history."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from tests.backends import LAKES, TEMPLATES, Warehouse
from tests.ingest.lake_workers import PARTIAL_RUNS
from warehouse.cli.main import main
from warehouse.store import copy as copy_module
from warehouse.store.connection import close_connection, connect
from warehouse.store.copy import copy_warehouse, table_names
from warehouse.store.lake import AsOf
from warehouse.store.maintain import inlined_rows
from warehouse.store.schema import code_schema_version

real_copy_table = copy_module._copy_table

# Views whose floating-point sums may differ in the last bit with the order rows are read in are
# compared after rounding to 12 significant digits; everything else must be equal to the bit.


def _relations(path) -> dict[str, list[tuple]]:
    """Every table and view of a local warehouse, rows sorted."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() UNION ALL "
                "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"
            ).fetchall()
        ]
        return {n: con.execute(f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}
    finally:
        con.close()


def _cli(*args):
    return CliRunner().invoke(main, [*map(str, args)])


def test_local_to_lake_to_local_gives_identical_tables_and_views(lake, tmp_path):
    original = tmp_path / "original.duckdb"
    TEMPLATES.copy_demo_file(original)
    there = _cli(
        "copy", "--from", original, "--to", lake.db, "--to-data-path", lake.data_path, "--json"
    )
    assert there.exit_code == 0, there.output
    report = json.loads(there.stdout)
    assert report["verified"] is True and report["schema_version"] == code_schema_version()
    assert {t["table"]: t["rows"] for t in report["tables"]}["runs"] == 3
    # The lake answers like the original.
    board = json.loads(lake.run("leaderboard", "--json").stdout)
    local_board = json.loads(_cli("--db", original, "leaderboard", "--json").stdout)
    assert board == local_board
    back = tmp_path / "back.duckdb"
    returned = _cli("copy", "--from", lake.db, "--to", back, "--json")
    assert returned.exit_code == 0 and json.loads(returned.stdout)["verified"] is True
    before, after = _relations(original), _relations(back)
    assert sorted(before) == sorted(after)
    for name in before:
        assert after[name] == before[name], name


def test_copy_refuses_a_destination_with_data_and_the_same_warehouse(demo_lake, tmp_path):
    lake = demo_lake
    original = tmp_path / "o.duckdb"
    TEMPLATES.copy_demo_file(original)
    snapshots = lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')")
    refused = _cli("copy", "--from", original, "--to", lake.db)
    assert refused.exit_code == 2 and "already holds data" in refused.output
    assert lake.sql("SELECT count(*) FROM ducklake_snapshots('tame')") == snapshots
    same = _cli("copy", "--from", lake.db, "--to", lake.db)
    assert same.exit_code == 2 and "same warehouse" in same.output
    missing = _cli("copy", "--from", tmp_path / "none.duckdb", "--to", tmp_path / "x.duckdb")
    assert missing.exit_code == 2 and not (tmp_path / "x.duckdb").exists()


def _inlined_rows(lake: Warehouse) -> int:
    """Live rows the lake's catalog holds inline (DuckLake's inlined-data tables), all tables."""
    con = connect(lake.address, read_only=True)
    try:
        return inlined_rows(con)
    finally:
        close_connection(con)


@pytest.mark.parametrize("demo_lake", LAKES, indirect=True)  # the data path matters
def test_maintain_flushes_inlined_rows_compacts_and_expires_history_but_keeps_the_data(demo_lake):
    lake = demo_lake
    # The demo's runs are small: their rows sit in the catalog, not in Parquet files.
    hypotheses = lake.sql("SELECT count(*) FROM ducklake_list_files('tame', 'hypotheses')")[0][0]
    assert hypotheses == 0 and _inlined_rows(lake) > 120
    first = lake.sql("SELECT min(snapshot_id) FROM ducklake_snapshots('tame')")[0][0]
    board = json.loads(lake.run("leaderboard", "--json").stdout)
    listed = json.loads(lake.run("lake", "snapshots", "--json").stdout)
    assert listed[0]["snapshot_id"] > first and "runs" in " ".join(s["changes"] for s in listed)
    dry = json.loads(lake.run("lake", "maintain", "--keep-days", "0", "--dry-run", "--json").stdout)
    assert dry["dry_run"] is True and dry["snapshots_expired"] > 0
    assert dry["rows_flushed"] == _inlined_rows(lake) and dry["files_merged"] is None
    done = lake.run("lake", "maintain", "--keep-days", "0", "--grace-hours", "0", "--json")
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["files_merged"] >= result["files_created"] and result["snapshots_left"] >= 1
    assert result["rows_flushed"] > 120 and _inlined_rows(lake) == 0
    assert lake.sql("SELECT count(*) FROM ducklake_list_files('tame', 'hypotheses')")[0][0] >= 1
    assert json.loads(lake.run("leaderboard", "--json").stdout) == board
    gone = lake.run("leaderboard", "--as-of", str(listed[1]["snapshot_id"]))
    assert gone.exit_code == 2 and "no such snapshot" in gone.output
    doctor = json.loads(lake.run("doctor", "--json").stdout)
    assert doctor["ok"] is True


def test_lake_commands_refuse_a_local_file(tmp_path):
    for command in (("lake", "maintain"), ("lake", "snapshots")):
        result = _cli("--db", tmp_path / "wh.duckdb", *command)
        assert result.exit_code == 2 and "is a local file" in result.output
    assert not (tmp_path / "wh.duckdb").exists()


def _tables_of(address, as_of=None) -> dict[str, list[tuple]]:
    """Every table of a warehouse (a lake at a snapshot when given), rows sorted."""
    con = connect(address, read_only=True, as_of=as_of)
    try:
        return {
            t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in table_names(con)
        }
    finally:
        close_connection(con)


def test_a_copy_that_fails_midway_leaves_no_destination_file(tmp_path, monkeypatch):
    original = tmp_path / "o.duckdb"
    TEMPLATES.copy_demo_file(original)
    copied = []

    def failing(src, dst, table):
        if len(copied) == 5:
            raise OSError(28, "No space left on device")
        copied.append(table)
        real_copy_table(src, dst, table)

    monkeypatch.setattr(copy_module, "_copy_table", failing)
    target = tmp_path / "copy.duckdb"
    with pytest.raises(OSError):
        copy_warehouse(original, target)
    assert copied and not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.duckdb", "o.duckdb.indexes"]
    # An empty destination that existed stays as it was: empty, no half-copied table.
    assert _cli("--db", target, "init").exit_code == 0
    before = _tables_of(target)
    copied.clear()
    with pytest.raises(OSError):
        copy_warehouse(original, target)
    assert _tables_of(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "copy.duckdb",
        "o.duckdb",
        "o.duckdb.indexes",
    ]


def test_a_killed_copy_never_leaves_a_partial_destination(tmp_path):
    original = tmp_path / "o.duckdb"
    TEMPLATES.copy_demo_file(original)
    expected = _tables_of(original)
    root = Path(__file__).resolve().parents[2]
    for trial, delay in enumerate((0.4, 0.9, 1.4, 2.0)):
        target = tmp_path / f"copy{trial}.duckdb"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "warehouse.cli",
                "copy",
                "--from",
                str(original),
                "--to",
                str(target),
            ],
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # Either the copy finished, whole and verified, or there is no destination at all.
        assert not target.exists() or _tables_of(target) == expected, delay
    # A later copy clears the staging files the killed ones left, and succeeds.
    final = tmp_path / "final.duckdb"
    for trial in range(4):
        final = tmp_path / f"copy{trial}.duckdb"
        if not final.exists():
            break
    assert _cli("copy", "--from", original, "--to", final).exit_code == 0
    assert _tables_of(final) == expected
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(f".{final.name}.copy-")]


# Runs each of the eight writers ingests while the lake is copied again and again (eight
# commits, each racing the copies).
RUNS_EACH = 1


# On the data directory (eight writers on the S3 data path: tests/ingest/test_lake_concurrency.py).
@pytest.mark.slow
@pytest.mark.parametrize("demo_lake", ["lake-dir"], indirect=True)
def test_a_copy_during_eight_writers_equals_the_lake_at_one_snapshot(demo_lake, tmp_path):
    lake = demo_lake
    testset = lake.sql("SELECT name FROM corpora WHERE role = 'test'")[0][0]
    n = lake.sql("SELECT n_segments FROM corpora WHERE name = ?", [testset])[0][0]
    root = Path(__file__).resolve().parents[2]
    writers = []
    for w in range(8):
        hyps = []
        for k in range(RUNS_EACH):
            path = tmp_path / f"w{w}-{k}.hyp"
            path.write_text("".join(f"writer {w} run {k} line {i}\n" for i in range(n)))
            hyps.append(str(path))
        writers.append(
            subprocess.Popen(
                [sys.executable, "-m", "tests.ingest.lake_workers", "ingest",
                 str(tmp_path / f"w{w}.log"), testset, *hyps],
                cwd=root,
                env={**lake.child_env(), "PYTHONPATH": str(root)},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )  # fmt: skip
    copies = []
    try:
        while len(copies) < 3 or any(p.poll() is None for p in writers):
            said: list[str] = []
            target = tmp_path / f"copy{len(copies)}.duckdb"
            result = copy_warehouse(lake.address, target, notify=said.append)
            snapshot = int(next(s for s in said if "at snapshot" in s).rsplit(" ", 1)[1])
            copies.append((target, snapshot, result))
            if len(copies) >= 4:
                break
    finally:
        for proc in writers:
            out, _ = proc.communicate(timeout=900)
            assert proc.returncode == 0, out
    assert lake.sql("SELECT count(*) FROM runs") == [(3 + 8 * RUNS_EACH,)]
    for target, snapshot, result in copies:
        assert result.verified
        assert _tables_of(target) == _tables_of(lake.address, AsOf(snapshot=snapshot)), snapshot
        # Every run of every copy is whole: all its hypotheses, statistics and sums.
        con = duckdb.connect(str(target), read_only=True)
        try:
            assert con.execute(PARTIAL_RUNS).fetchall() == []
            assert con.execute("SELECT count(*) FROM hypotheses").fetchone() == (
                n * len(_tables_of(target)["runs"]),
            )
        finally:
            con.close()
        report = json.loads(_cli("--db", target, "doctor", "--json").stdout)
        assert report["ok"] is True
    assert len({snapshot for _t, snapshot, _r in copies}) >= 2  # copies saw writers at work


def test_snapshots_name_the_runs_they_added_and_deleted(demo_lake):
    lake = demo_lake
    board = json.loads(lake.run("leaderboard", "--json").stdout)
    gone = next(r for r in board if r["model_slug"] == "demo-large")
    assert lake.run("runs", "delete", gone["run_id"], "--yes").exit_code == 0
    listed = json.loads(lake.run("lake", "snapshots", "--json").stdout)
    added = [name for s in listed for name in s["runs_added"]]
    assert sorted(n.split(" (")[0] for n in added) == [
        "demo-large/zero-shot", "demo-small/few-shot", "demo-small/zero-shot",
    ]  # fmt: skip
    assert listed[0]["runs_deleted"] == [f"demo-large/zero-shot ({gone['run_id'][:8]})"]
    table = lake.run("lake", "snapshots")
    assert f"-demo-large/zero-shot ({gone['run_id'][:8]})" in table.output


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_copy_refuses_what_is_not_a_regular_file_at_once(tmp_path, kind):
    demo = tmp_path / "demo.duckdb"
    TEMPLATES.copy_demo_file(demo)
    special = {
        "fifo": tmp_path / "pipe",
        "directory": tmp_path / "dir",
        "device": Path("/dev/null"),
    }[kind]
    if kind == "fifo":
        os.mkfifo(special)
    elif kind == "directory":
        special.mkdir()
    for args in (
        ["--from", special, "--to", tmp_path / "out.duckdb"],
        ["--from", demo, "--to", special],
    ):
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "warehouse.cli", "copy", *map(str, args)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert time.monotonic() - started < 30  # a FIFO is never opened: no wait for a writer
        assert done.returncode == 2, done.stderr
        assert "not a regular file" in done.stderr and "nothing was written" in done.stderr
        assert not (tmp_path / "out.duckdb").exists()
