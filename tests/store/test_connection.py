"""Connections the commands open: never DuckDB's progress bar, which a query slower than two
seconds draws on standard output — into the middle of `--json` output (seen in CI: a
`leaderboard --json` on a loaded lake began with `100% ▕████▏`). DuckDB turns the bar on in a
plain process (not under pytest), so the check runs in a child process, as a command does.
DuckDB's worker threads follow `$TAME_WH_DUCKDB_THREADS`."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

from tests.conftest import snapshot
from warehouse.store.connection import THREADS_ENV, close_connection, connect

THREADS = "SELECT current_setting('threads')"


def test_no_connection_draws_a_progress_bar(warehouse):
    script = (
        "import sys\n"
        "from warehouse.store.address import parse_address\n"
        "from warehouse.store.connection import close_connection, connect\n"
        "for read_only in (False, True):\n"
        "    con = connect(parse_address(sys.argv[1], sys.argv[2] or None), read_only=read_only)\n"
        "    print(con.execute(\"SELECT current_setting('enable_progress_bar')\").fetchone()[0])\n"
        "    close_connection(con)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, warehouse.db, warehouse.data_path or ""],
        env=warehouse.child_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stdout.split() == ["False", "False"]


def test_duckdb_threads_follow_the_environment_on_every_backend(warehouse, monkeypatch):
    plain = duckdb.connect()
    default = plain.execute(THREADS).fetchone()[0]
    plain.close()
    assert default != 3
    for value, expected in (("3", 3), ("", default)):
        monkeypatch.setenv(THREADS_ENV, value)
        for read_only in (False, True):
            con = connect(warehouse.address, read_only=read_only)
            try:
                assert con.execute(THREADS).fetchone()[0] == expected, (value, read_only)
            finally:
                close_connection(con)


def test_a_file_this_process_has_open_already_takes_the_setting(db_path, monkeypatch):
    own = duckdb.connect(str(db_path))  # a library user's connection, with DuckDB's defaults
    try:
        monkeypatch.setenv(THREADS_ENV, "3")
        con = connect(db_path)
        try:
            assert con.execute(THREADS).fetchone()[0] == 3
        finally:
            close_connection(con)
    finally:
        own.close()


@pytest.mark.parametrize("value", ["0", "two", "1.5", "-1", "1025", "٣"])
def test_a_bad_duckdb_threads_setting_is_a_one_line_error_that_changes_nothing(
    run_cli, db_path, write_lines, monkeypatch, value
):
    src = write_lines("src.txt", ["a b c", "d e f"])
    before = snapshot(db_path)
    monkeypatch.setenv(THREADS_ENV, value)
    result = run_cli("testset", "add", "ts", "--src", src, "--ref", src)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and THREADS_ENV in lines[0] and repr(value) in lines[0], lines
    assert snapshot(db_path) == before
