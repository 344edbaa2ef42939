"""Every view and macro has one definition (`sql/views/`), and every view answers on the demo
warehouse as it did when views were still defined across the numbered schema files.

`data/demo_views.json` holds every view's rows on the demo warehouse (timestamps masked, floats by
their repr), recorded before the move. A change that means to alter a view's answers records it
again: `python -m tests.store.test_views_home`.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner

from cli.main import main
from warehouse.store.resources import schema_files, view_statements

RECORDED = Path(__file__).parent / "data" / "demo_views.json"
_DEFINES = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO)\s+(\w+)", re.I | re.M)


def _plain(value: Any) -> Any:
    """A value as recorded: timestamps masked, floats by repr, NaN as None."""
    if isinstance(value, float):
        return None if math.isnan(value) else repr(value)
    if isinstance(value, (datetime.datetime, datetime.date)):
        return "TIME"
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def every_view(db: Path) -> dict[str, list[dict[str, Any]]]:
    """Every view's rows, each as a dict, in a stable order."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"
        ).fetchall()
        out = {}
        for (name,) in names:
            cursor = con.execute(f'SELECT * FROM "{name}"')
            columns = [d[0] for d in cursor.description]
            rows = [dict(zip(columns, map(_plain, row), strict=True)) for row in cursor.fetchall()]
            out[name] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
        return json.loads(json.dumps(out, default=str))
    finally:
        con.close()


def _demo(db: Path) -> Path:
    assert CliRunner().invoke(main, ["--db", str(db), "demo", "--json"]).exit_code == 0
    return db


def test_each_view_and_macro_is_defined_once_and_only_in_sql_views():
    numbered = {f.name: _DEFINES.findall(f.text) for f in schema_files()}
    assert {name: found for name, found in numbered.items() if found} == {}
    defined = [name for s in view_statements() for _kind, name in _DEFINES.findall(s)]
    assert len(defined) == len(set(defined)) > 30
    assert all(re.search(r"CREATE\s+OR\s+REPLACE", s) for s in view_statements())


def test_every_view_answers_on_the_demo_as_recorded(tmp_path):
    assert every_view(_demo(tmp_path / "demo.duckdb")) == json.loads(RECORDED.read_text())


if __name__ == "__main__":  # record the views' answers again (after a deliberate change)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        answers = every_view(_demo(Path(folder) / "demo.duckdb"))
    RECORDED.write_text(json.dumps(answers, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print(f"recorded {len(answers)} views in {RECORDED}", file=sys.stderr)
