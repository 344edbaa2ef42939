"""Connections the commands open: never DuckDB's progress bar, which a query slower than two
seconds draws on standard output — into the middle of `--json` output (seen in CI: a
`leaderboard --json` on a loaded lake began with `100% ▕████▏`). DuckDB turns the bar on in a
plain process (not under pytest), so the check runs in a child process, as a command does."""

from __future__ import annotations

import subprocess
import sys


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
