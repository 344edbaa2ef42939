"""The `tame-wh` group: its command list is written without importing the commands; global options
anywhere on the line; one watchdog line when lakes go silent."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from warehouse.cli.main import COMMANDS, SUMMARIES, main

ROOT = Path(__file__).resolve().parents[2]


def _listing(width: int, write: Callable[[click.Context, click.HelpFormatter], None]) -> str:
    """The "Commands" section as `write(ctx, formatter)` formats it at `width` columns."""
    ctx = click.Context(main, info_name="tame-wh", terminal_width=width, max_content_width=width)
    formatter = ctx.make_formatter()
    write(ctx, formatter)
    return formatter.getvalue()


def test_every_command_has_a_summary():
    assert set(SUMMARIES) == set(COMMANDS)


@pytest.mark.parametrize("width", [50, 80, 120, 200])
def test_the_command_list_equals_the_one_click_makes_from_the_commands(width):
    ours = _listing(width, main.format_commands)
    # click's own listing loads every command and shortens its help.
    theirs = _listing(width, lambda ctx, f: click.Group.format_commands(main, ctx, f))
    assert "audit" in ours and "Measure how close" in ours
    assert ours == theirs


def test_help_imports_no_command():
    modules = sorted({target.split(":")[0] for target in COMMANDS.values()})
    script = (
        "import sys\n"
        "from warehouse.cli.main import main\n"
        "main(['--help'], prog_name='tame-wh', standalone_mode=False)\n"
        f"print('loaded', sorted(set({modules!r}) & set(sys.modules)))\n"
        "print('numpy', 'numpy' in sys.modules)\n"  # the options' vocabulary loads no metric code
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "Commands:" in done.stdout
    assert done.stdout.strip().splitlines()[-2:] == ["loaded []", "numpy False"]


def test_global_options_may_follow_the_command(demo_db, monkeypatch):
    from click.testing import CliRunner

    monkeypatch.setenv("COLUMNS", "60")
    db = demo_db
    runner = CliRunner()
    before = runner.invoke(main, ["--db", str(db), "--wide", "leaderboard"])
    after = runner.invoke(main, ["leaderboard", "--db", str(db), "--wide"])
    narrow = runner.invoke(main, ["--db", str(db), "leaderboard"])
    assert before.exit_code == after.exit_code == 0, after.output
    assert after.output == before.output != narrow.output
    listed = runner.invoke(main, ["runs", "list", f"--db={db}", "--json"])
    assert listed.exit_code == 0 and '"run_id"' in listed.output


def test_a_commands_own_option_and_text_after_a_double_dash_stay(tmp_path):
    from warehouse.cli.main import _hoist_global_options

    ctx = click.Context(main)
    assert _hoist_global_options(main, ctx, ["ingest", "--lock-timeout", "5", "--wide"]) == [
        "--wide", "ingest", "--lock-timeout", "5",
    ]  # fmt: skip
    assert _hoist_global_options(main, ctx, ["query", "--", "--wide"]) == ["query", "--", "--wide"]
    assert _hoist_global_options(main, ctx, ["runs", "show", "r1", "--debug"]) == [
        "--debug", "runs", "show", "r1",
    ]  # fmt: skip
    assert _hoist_global_options(main, ctx, ["leaderboard", "--testset", "--wide"]) == [
        "leaderboard", "--testset", "--wide",
    ]  # fmt: skip
    assert _hoist_global_options(main, ctx, ["leaderboard", "--help"]) == ["leaderboard", "--help"]


def test_a_command_watching_two_silent_lakes_stops_with_one_line(tmp_path):
    import os
    import socket
    import time

    # Two paused catalogs: the kernel accepts their connections and nobody ever answers.
    servers = [socket.socket() for _ in range(2)]
    try:
        for server in servers:
            server.bind(("127.0.0.1", 0))
            server.listen(8)
        a, b = (
            f"ducklake:postgres:host=127.0.0.1 port={s.getsockname()[1]} dbname=silent"
            for s in servers
        )
        env = {**os.environ, "TAME_WH_LAKE_TIMEOUT": "1"}
        env.pop("TAME_WH_DB", None)
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "warehouse.cli", "--db", a, "copy", "--from", a, "--to", b],
            capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        for server in servers:
            server.close()
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert done.returncode == 4, done.stderr
    assert len(errors) == 1 and "has not answered for 1 s" in errors[0], done.stderr
    assert took < 30
