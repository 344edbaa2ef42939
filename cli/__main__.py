"""`python -m warehouse.cli` runs the tame-wh command."""

from warehouse.cli.entry import run

run()
