"""Every view and macro has one definition (`sql/views/`), and every view answers on the demo
warehouse as it did when views were still defined across the numbered schema files.

`data/demo_views.json` holds every view's rows on the demo warehouse (timestamps masked, floats by
their repr), recorded before the move; `data/views_by_version.json` a hash of the definitions per
schema version. A change that means to alter a view records both again (after adding a numbered
schema file): `python -m tests.store.test_views_home`.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner

from warehouse import Warehouse
from warehouse.cli.main import main
from warehouse.store.resources import schema_files, view_statements
from warehouse.store.schema import code_schema_version

RECORDED = Path(__file__).parent / "data" / "demo_views.json"
# A hash of the views' definitions per schema version: existing warehouses receive a changed
# view only when the schema version moves, so a change must come with a new numbered file.
VIEWS_BY_VERSION = Path(__file__).parent / "data" / "views_by_version.json"
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


def views_of(con: duckdb.DuckDBPyConnection) -> dict[str, list[dict[str, Any]]]:
    """Every view's rows on an open warehouse, each as a dict, in a stable order."""
    names = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal "
        "AND database_name = current_database() ORDER BY 1"
    ).fetchall()
    out = {}
    for (name,) in names:
        cursor = con.execute(f'SELECT * FROM "{name}"')
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, map(_plain, row), strict=True)) for row in cursor.fetchall()]
        out[name] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return json.loads(json.dumps(out, default=str))


def every_view(db: Path) -> dict[str, list[dict[str, Any]]]:
    """Every view's rows in the warehouse file `db`."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return views_of(con)
    finally:
        con.close()


def views_hash() -> str:
    """A hash of every view and macro definition, whitespace aside."""
    text = "\n".join(" ".join(statement.split()) for statement in view_statements())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _demo(db: Path) -> Path:
    assert CliRunner().invoke(main, ["--db", str(db), "demo", "--json"]).exit_code == 0
    return db


def test_each_view_and_macro_is_defined_once_and_only_in_sql_views():
    numbered = {f.name: _DEFINES.findall(f.text) for f in schema_files()}
    assert {name: found for name, found in numbered.items() if found} == {}
    defined = [name for s in view_statements() for _kind, name in _DEFINES.findall(s)]
    assert len(defined) == len(set(defined)) > 30
    assert all(re.search(r"CREATE\s+OR\s+REPLACE", s) for s in view_statements())


def test_a_changed_view_comes_with_a_new_schema_version():
    recorded = json.loads(VIEWS_BY_VERSION.read_text())
    version = str(code_schema_version())
    assert recorded.get(version) == views_hash(), (
        f"sql/views/ changed but the schema version is still {version}: existing warehouses "
        "would keep the old definitions. Add a numbered file to sql/ (a header is enough), "
        "then record with `python -m tests.store.test_views_home`."
    )


def test_every_view_answers_on_the_demo_as_recorded(demo_db):
    assert every_view(demo_db) == json.loads(RECORDED.read_text())


def test_every_view_answers_on_a_demo_lake_as_recorded(demo_lake):
    # The views are the same definitions on a lake (DuckLake's own SQL dialect aside): the
    # demo loaded into a lake answers exactly as the recorded file did.
    lake = demo_lake
    with Warehouse.open(lake.address, access="read") as wh:
        assert views_of(wh.con) == json.loads(RECORDED.read_text())


if __name__ == "__main__":  # record the views' answers again (after a deliberate change)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        answers = every_view(_demo(Path(folder) / "demo.duckdb"))
    RECORDED.write_text(json.dumps(answers, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    hashes = json.loads(VIEWS_BY_VERSION.read_text()) if VIEWS_BY_VERSION.exists() else {}
    hashes[str(code_schema_version())] = views_hash()
    VIEWS_BY_VERSION.write_text(json.dumps(hashes, sort_keys=True, indent=1) + "\n", "utf-8")
    print(f"recorded {len(answers)} views in {RECORDED}", file=sys.stderr)
