"""Ctrl-C at any point of an ingest: exit 130, one line saying nothing was committed, and the
warehouse exactly as it was (never an "internal error" from the query DuckDB stopped); a Ctrl-C
that comes after the commit says that the run stays."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import VOCABULARY, snapshot
from warehouse.store.interrupt import NOTHING_COMMITTED, SOMETHING_COMMITTED

N = 20_000


# What Python prints when a signal stops its own start-up (its standard streams, site, or runpy
# for `-m`), before any module of ours runs: it then exits 1.
PYTHON_START_UP_CUT = (
    "Fatal Python error: init_",  # e.g. init_sys_streams, seen in CI on a busy machine
    "Failed to import the site module",
    "Could not import runpy module",
)


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_an_ingest_commits_nothing(tmp_path, write_lines, run_cli, db_path):
    rng = random.Random(4)
    sentences = [" ".join(rng.choice(VOCABULARY) for _ in range(18)) for _ in range(N)]
    src = write_lines("s", sentences)
    ref = write_lines("r", [s.upper() for s in sentences])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    hyp = write_lines("h", [s.upper() if i % 3 else s for i, s in enumerate(sentences)])
    before = snapshot(db_path)
    command = [
        sys.executable, "-m", "warehouse.cli", "--db", str(db_path), "ingest", "--testset", "ts",
        "--hyp", str(hyp), "--model-slug", "m",
    ]  # fmt: skip
    # Signals while the modules load, while the text is read and scored, while intervals are
    # resampled and while the run is written.
    interrupted = 0
    for delay in (0.05, 0.4, 0.9, 1.5, 2.2, 3.0):
        # A job started in the background by a script inherits SIGINT ignored; a terminal's
        # command does not.
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=300)
        if proc.returncode == 0:  # finished before the signal: this machine is fast
            break
        # 130, or killed by SIGINT while Python starts (a shell shows both as 130); or Python's
        # own start-up stopped before any of ours ran (it exits 1 saying so).
        started = not any(line in err for line in PYTHON_START_UP_CUT)
        assert proc.returncode in (130, -signal.SIGINT) or (proc.returncode == 1 and not started), (
            delay,
            err,
        )
        assert "internal error" not in err, err
        if SOMETHING_COMMITTED in err:  # the signal came after the commit: the run is whole
            assert snapshot(db_path) != before
            assert run_cli("runs", "list", "--json").output.count('"run_id"') == 1
            break
        interrupted += 1
        if proc.returncode == 130:
            assert NOTHING_COMMITTED in err, err
        assert snapshot(db_path) == before, (delay, err)
    assert interrupted >= 3
