"""The README's SQL recipes run on the demo warehouse and return rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.backends import TEMPLATES

README = Path(__file__).resolve().parents[1] / "README.md"


def _recipes() -> list[str]:
    """The ```sql blocks of the README's "Examples and recipes" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### Examples and recipes", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, flags=re.S)


def test_the_readme_has_recipes():
    assert len(_recipes()) >= 3


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("readme") / "demo.duckdb"
    TEMPLATES.copy_demo_file(db)
    return db


@pytest.mark.parametrize("sql", _recipes(), ids=lambda s: s.split("\n", 1)[0][:40])
def test_every_recipe_runs_and_returns_rows(demo_db, sql):
    from click.testing import CliRunner

    from warehouse.cli.main import main

    result = CliRunner().invoke(main, ["--db", str(demo_db), "query", sql, "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip().splitlines()) >= 2  # a header and at least one row
