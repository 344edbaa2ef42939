"""What the process remembers about Ctrl-C: whether a transaction had committed when it came;
and that a Ctrl-C after the command has finished cannot cut its exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from warehouse.store.interrupt import NOTHING_COMMITTED, SOMETHING_COMMITTED

PRELUDE = """
import os, signal, duckdb
from warehouse.store.connection import transaction
from warehouse.store.interrupt import (
    interrupt_requested, interrupted_message, stop_raising_interrupts, watch_interrupts,
)
signal.signal(signal.SIGINT, signal.default_int_handler)
watch_interrupts()
con = duckdb.connect()
con.execute("CREATE TABLE t (x INTEGER)")
"""


def _run(body: str) -> str:
    """Run `body` after the prelude in a fresh interpreter; its stdout."""
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_ctrl_c_inside_a_transaction_rolls_it_back_and_says_nothing_was_committed():
    out = _run("""
        try:
            with transaction(con):
                con.execute("INSERT INTO t VALUES (1)")
                os.kill(os.getpid(), signal.SIGINT)
                con.execute("INSERT INTO t VALUES (2)")
        except KeyboardInterrupt:
            print(con.execute("SELECT count(*) FROM t").fetchone()[0])
            print(interrupted_message())
        """)
    assert out.splitlines() == ["0", NOTHING_COMMITTED]


def test_ctrl_c_after_a_commit_says_the_committed_changes_stay():
    out = _run("""
        with transaction(con):
            con.execute("INSERT INTO t VALUES (1)")
        try:
            os.kill(os.getpid(), signal.SIGINT)
            print("not interrupted")
        except KeyboardInterrupt:
            print(con.execute("SELECT count(*) FROM t").fetchone()[0])
            print(interrupted_message())
        """)
    assert out.splitlines() == ["1", SOMETHING_COMMITTED]


def test_a_failed_commit_does_not_count_as_committed():
    out = _run("""
        con.execute("CREATE TABLE u (x INTEGER PRIMARY KEY)")
        other = con.cursor()
        try:
            with transaction(con):
                con.execute("INSERT INTO u VALUES (5)")
                other.execute("INSERT INTO u VALUES (5)")  # commits first: ours then conflicts
        except duckdb.Error as exc:
            print(type(exc).__name__)
        print(interrupted_message())
        """)
    assert out.splitlines() == ["TransactionException", NOTHING_COMMITTED]


def test_after_the_command_ends_a_ctrl_c_cannot_cut_the_exit():
    out = _run("""
        stop_raising_interrupts()
        os.kill(os.getpid(), signal.SIGINT)
        print(interrupt_requested())
        import atexit
        atexit.register(os.kill, os.getpid(), signal.SIGINT)  # while the interpreter shuts down
        """)
    assert out == "False"  # and `_run` checked the exit code: 0, not death by SIGINT
