"""`python -m cli` runs the tame-wh command."""

from cli.entry import run

run()
