"""`python -m cli` runs the tame-wh command."""

from cli.main import main

main(prog_name="tame-wh")
