"""The executable's start-up: the garbage collector paused while modules load, then resumed;
pandas left unloaded by DuckDB's parameter checks, and still there for anyone who imports it."""

import subprocess
import sys

import pytest

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


_PANDAS_PROBE = """
import atexit, sys
atexit.register(lambda: print("pandas", "pandas" in sys.modules))
sys.argv = ["tame-wh", *sys.argv[1:]]
from warehouse.cli.entry import run
run()
"""


def test_a_command_with_query_parameters_does_not_load_pandas(demo_db):
    pytest.importorskip("pandas")  # the dev extra installs it: in CI this always runs
    done = subprocess.run(
        [sys.executable, "-c", _PANDAS_PROBE, "--db", str(demo_db), "runs", "list", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"run_id"' in done.stdout
    assert done.stdout.splitlines()[-1] == "pandas False"


def test_pandas_still_loads_for_code_outside_tame_wh_and_duckdb_still_binds_parameters(demo_db):
    pytest.importorskip("pandas")
    script = """
import sys, duckdb
from warehouse.cli.entry import refuse_pandas_for_duckdb
refuse_pandas_for_duckdb()
from warehouse.analysis.runs import list_runs
con = duckdb.connect(sys.argv[1], read_only=True)
print(len(list_runs(con, testset="demo-test")) > 0, "pandas" in sys.modules)
print(con.execute("SELECT ?::INTEGER + 1, ?", [41, None]).fetchall(), "pandas" in sys.modules)
import pandas
print(pandas.DataFrame({"a": [1]}).shape)
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(demo_db)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    # tame-wh's own query: bound without pandas; a script's own DuckDB call, or import, loads it.
    assert done.stdout.splitlines() == ["True False", "[(42, None)] True", "(1, 1)"]


_CUT_IMPORT = """
import importlib.abc, sys
from warehouse.store import interrupt

class Cut(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "warehouse.cli.main":
            if case == "interrupted":
                interrupt._requested.set()  # what the SIGINT handler records
            raise ImportError("initialization failed")  # as DuckDB's module says when cut

sys.meta_path.insert(0, Cut())
case = sys.argv[1]
sys.argv = ["tame-wh", "--version"]
from warehouse.cli.entry import run
run()
"""


@pytest.mark.parametrize("case", ["interrupted", "broken"])
def test_a_ctrl_c_inside_a_modules_initialisation_is_an_interrupt_not_a_traceback(case):
    done = subprocess.run(
        [sys.executable, "-c", _CUT_IMPORT, case], capture_output=True, text=True, check=False
    )
    if case == "interrupted":
        assert done.returncode == 130, done.stderr
        said = done.stderr.strip()
        assert said == "interrupted; nothing was committed by the interrupted command", said
    else:  # an ImportError without a Ctrl-C is a broken installation: it is not hidden
        assert done.returncode == 1 and "ImportError: initialization failed" in done.stderr
