"""Who holds the warehouse file: the OS names the process (a reader or the writer) without the
probe taking the lock; a blocked writer's error and `doctor` say it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from warehouse.store.holders import lock_holder


def _hold(path: Path, read_only: bool) -> subprocess.Popen:
    """A child process that opens the file and keeps it open until killed."""
    proc = subprocess.Popen(
        [
            sys.executable, "-c",
            "import duckdb, sys, time\n"
            f"con = duckdb.connect({str(path)!r}, read_only={read_only})\n"
            "print('open', flush=True)\n"
            "time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
    return proc


@pytest.mark.parametrize(("read_only", "mode"), [(True, "reading"), (False, "writing")])
def test_the_os_names_the_process_that_holds_the_file(db_path, read_only, mode):
    assert lock_holder(db_path) is None
    holder = _hold(db_path, read_only)
    try:
        found = lock_holder(db_path)
        assert found is not None and found.pid == holder.pid and found.mode == mode
        assert found.process is not None and found.process.startswith("python")
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.05)
    assert lock_holder(db_path) is None
    assert lock_holder(db_path.parent / "missing.duckdb") is None


def test_a_blocked_writer_and_doctor_name_the_reader_that_holds_the_file(run_cli, db_path):
    holder = _hold(db_path, read_only=True)
    try:
        src = db_path.parent / "s.txt"
        src.write_text("a b c\n")
        writer = run_cli("--lock-timeout", "0.5", "testset", "add", "t", "--src", src, "--ref", src)
        assert writer.exit_code == 2
        assert f"process {holder.pid} (python" in writer.stderr
        assert "holds it for reading" in writer.stderr and "BI tool" in writer.stderr
        report = json.loads(run_cli("doctor", "--json").stdout)
        assert report["warehouse"]["lock_holder"]["pid"] == holder.pid
        assert report["warehouse"]["lock_holder"]["mode"] == "reading"
        shown = run_cli("doctor").stdout
        assert f"process {holder.pid}" in shown and "writers (ingest, audit, ...) wait" in shown
    finally:
        holder.kill()
        holder.wait()
