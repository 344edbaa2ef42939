"""Readers do not need the write lock: `leaderboard`, `runs list/show`, `report`, `compare` and
`query` open the warehouse once, read-only, create and upgrade nothing, share the file with other
readers, wait at most --lock-timeout for a writer, work on a read-only file system, and say so in
one line when there is no warehouse. `doctor` reports a writer's lock as a state."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from tests.backends import TEMPLATES
from tests.conftest import snapshot
from warehouse.cli.main import main
from warehouse.store.resources import schema_files, score_macro_statements

ROOT = Path(__file__).resolve().parents[2]
RUN_A, RUN_B = "RUN_A", "RUN_B"  # replaced by the demo's run ids

# Every read-only command, with run ids where it needs them.
READERS = [
    ("leaderboard",),
    ("leaderboard", "--json"),
    ("runs", "list"),
    ("runs", "list", "--json"),
    ("runs", "show", RUN_A),
    ("report", RUN_A),
    ("report", RUN_A, "--json"),
    ("compare", RUN_A, RUN_B),
    ("compare", RUN_A, RUN_B, "--significance", "--n-bootstrap", "50"),
    ("query", "SELECT count(*) FROM runs"),
    ("query", "SHOW TABLES"),
    ("regressions",),
    ("regressions", "--json"),
    ("corpus", "list"),
    ("corpus", "show", "demo-train"),
    ("testset", "list", "--json"),
    ("testset", "show", "demo-test"),
]
# One of each command, for the tests that start child processes.
EACH_READER = [
    ("leaderboard",),
    ("runs", "list"),
    ("runs", "show", RUN_A),
    ("report", RUN_A),
    ("compare", RUN_A, RUN_B, "--significance", "--n-bootstrap", "50"),
    ("query", "SELECT count(*) FROM runs"),
    ("testset", "list"),
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A demo warehouse built once, and its run ids."""
    path = tmp_path_factory.mktemp("readers") / "demo.duckdb"
    TEMPLATES.copy_demo_file(path)
    con = duckdb.connect(str(path), read_only=True)
    try:
        ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    finally:
        con.close()
    return path, ids


def _args(command: tuple[str, ...], ids: list[str]) -> list[str]:
    return [{RUN_A: ids[0], RUN_B: ids[1]}.get(a, a) for a in command]


def _cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    """Run `python -m warehouse.cli ARGS` in a child process (a separate DuckDB instance)."""
    return subprocess.run(
        [sys.executable, "-m", "warehouse.cli", *args],
        cwd=cwd or ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


@contextlib.contextmanager
def _holder(db: Path, *, read_only: bool):
    """Another process holding the warehouse open (a BI tool reading, or a writer)."""
    code = (
        "import duckdb, sys, time\n"
        f"con = duckdb.connect({str(db)!r}, read_only={read_only})\n"
        "con.execute('SELECT count(*) FROM runs').fetchall()\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_without_a_warehouse_a_reader_says_so_and_creates_nothing(tmp_path, command):
    db = tmp_path / "absent.duckdb"
    args = _args(command, ["0123456789abcdef", "fedcba9876543210"])
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: no warehouse at {db}: nothing to read (create one with `tame-wh init` or "
        "`tame-wh demo`, or pass --db PATH)"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", EACH_READER, ids=" ".join)
def test_reader_works_while_another_process_reads(demo, tmp_path, command):
    path, ids = demo
    db = tmp_path / "shared.duckdb"
    shutil.copyfile(path, db)
    before = snapshot(db)
    with _holder(db, read_only=True):
        started = time.monotonic()
        result = _cli("--db", str(db), "--lock-timeout", "0", *_args(command, ids))
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - started < 60
    assert snapshot(db) == before


@pytest.mark.parametrize("command", EACH_READER, ids=" ".join)
def test_reader_waits_for_a_writer_at_most_the_lock_timeout(demo, tmp_path, command):
    path, ids = demo
    db = tmp_path / "busy.duckdb"
    shutil.copyfile(path, db)
    with _holder(db, read_only=False):
        started = time.monotonic()
        result = _cli("--db", str(db), "--lock-timeout", "0.5", *_args(command, ids))
        elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert "locked by another process" in result.stderr and "--lock-timeout" in result.stderr
    assert elapsed < 30


def _read_only_mount(source: Path, mount: Path) -> bool:
    """Bind-mount `source` read-only at `mount` (needs root and mount rights)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    mount.mkdir()
    done = subprocess.run(["mount", "--bind", str(source), str(mount)], capture_output=True)
    if done.returncode != 0:
        return False
    again = subprocess.run(
        ["mount", "-o", "remount,ro,bind", str(mount)], capture_output=True, check=False
    )
    if again.returncode != 0:
        subprocess.run(["umount", str(mount)], check=False)
        return False
    return True


def test_readers_work_on_a_read_only_file_system(demo, tmp_path):
    # The strongest form of "read-only file permission": not even root may write there.
    path, ids = demo
    source = tmp_path / "source"
    source.mkdir()
    shutil.copyfile(path, source / "wh.duckdb")
    mount = tmp_path / f"ro-{uuid.uuid4().hex[:6]}"
    if not _read_only_mount(source, mount):
        pytest.skip("cannot bind-mount a read-only file system here")
    try:
        with pytest.raises(OSError):
            (mount / "probe").write_text("x")
        for command in EACH_READER:
            result = _cli("--db", str(mount / "wh.duckdb"), *_args(command, ids), cwd=tmp_path)
            assert result.returncode == 0, (command, result.stderr)
        assert sorted(p.name for p in mount.iterdir()) == ["wh.duckdb"]
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_concurrent_queries_never_crash(demo, tmp_path):
    path, ids = demo
    db = tmp_path / "busy.duckdb"
    shutil.copyfile(path, db)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commands = [
        ["query", f"SELECT count(*) FROM runs WHERE run_id <> '{i}'"] for i in range(12)
    ] + [["leaderboard", "--json"], ["runs", "list", "--json"], ["report", ids[0], "--json"]]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "warehouse.cli", "--db", str(db), *command],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    for proc in procs:
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert [code for code, _err in results] == [0] * len(commands), results


def test_an_older_schema_is_named_by_readers_and_read_by_query(demo, tmp_path):
    # Decision: read commands never upgrade; those built on the current views say to run
    # `tame-wh init`; `query` (plain SQL) reads whatever the older warehouse holds.
    _path, ids = demo
    db = tmp_path / "old.duckdb"
    files = schema_files()[:-1]
    con = duckdb.connect(str(db))
    for statement in score_macro_statements():  # as `init` applies them: some files score sums
        con.execute(statement)
    for sql_file in files:  # a warehouse written by the previous schema version
        con.execute(sql_file.text)
        con.execute(
            "INSERT INTO schema_version (version, tame_wh_version) VALUES (?, 'old')",
            [sql_file.number],
        )
    con.close()
    before = snapshot(db)
    runner = CliRunner()
    for command in READERS:
        result = runner.invoke(main, ["--db", str(db), *_args(command, ids)])
        if command[0] == "query":
            assert result.exit_code == 0, result.output
            continue
        assert result.exit_code == 2, (command, result.output)
        assert f"schema version {len(files)} is older" in result.stderr
        assert "run `tame-wh init`" in result.stderr
    assert snapshot(db) == before
    assert runner.invoke(main, ["--db", str(db), "init"]).exit_code == 0
    assert runner.invoke(main, ["--db", str(db), "leaderboard"]).exit_code == 0


def test_doctor_reports_a_writers_lock_as_a_state(demo, tmp_path):
    path, _ids = demo
    db = tmp_path / "locked.duckdb"
    shutil.copyfile(path, db)
    with _holder(db, read_only=False):
        result = _cli("--db", str(db), "--lock-timeout", "0.5", "doctor")
        as_json = _cli("--db", str(db), "--lock-timeout", "0.5", "doctor", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "locked by another process" in result.stdout and "PROBLEMS FOUND" not in result.stdout
    doc = json.loads(as_json.stdout)
    assert doc["ok"] is True and doc["warehouse"]["locked"] is True
    with _holder(db, read_only=True):
        reading = _cli("--db", str(db), "doctor", "--json")
    assert json.loads(reading.stdout)["warehouse"]["locked"] is False
