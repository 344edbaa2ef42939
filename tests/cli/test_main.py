"""The `tame-wh` group: its command list is written without importing the commands."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from cli.main import COMMANDS, SUMMARIES, main

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
        "from cli.main import main\n"
        "main(['--help'], prog_name='tame-wh', standalone_mode=False)\n"
        f"print('loaded', sorted(set({modules!r}) & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "Commands:" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "loaded []"
