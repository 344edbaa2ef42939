"""The executable's start-up: the garbage collector paused while modules load, then resumed."""

import subprocess
import sys

_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("gc", gc.isenabled(), gc.get_freeze_count() > 0))
sys.argv = ["tame-wh", *sys.argv[1:]]
from warehouse.cli.entry import run
run()
"""


def _probe(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith("gc ")]


def test_the_collector_resumes_with_the_loaded_modules_frozen_once_a_command_is_loaded():
    assert _probe("audit", "--help") == ["gc True True"]


def test_the_collector_stays_paused_in_a_run_that_loads_no_command():
    assert _probe("--version") == ["gc False False"]
