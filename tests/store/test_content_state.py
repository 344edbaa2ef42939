"""The digest of what pages show (warehouse/store/content_state.py): every stored table is in it
or owned by a parent in it, and a changed row changes it."""

from __future__ import annotations

from warehouse.store.content_state import HASHED_TABLES, NOT_SHOWN, PARENT_OF, content_state
from warehouse.store.schema import open_warehouse


def test_every_table_is_hashed_or_owned_by_a_hashed_parent(db_path):
    con = open_warehouse(db_path)
    try:
        tables = {
            name
            for (name,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            ).fetchall()
        }
    finally:
        con.close()
    # A new table must be placed here, or a dashboard would not see its rows change.
    assert tables == set(HASHED_TABLES) | set(PARENT_OF) | set(NOT_SHOWN)
    assert set(PARENT_OF.values()) <= set(HASHED_TABLES)


def test_a_changed_row_changes_the_digest_and_nothing_else_does(db_path):
    con = open_warehouse(db_path)
    try:
        before = content_state(con)
        assert content_state(con) == before
        con.execute("UPDATE settings SET value = value + 1 WHERE key = 'bootstrap.n'")
        changed = content_state(con)
        con.execute("UPDATE settings SET value = value - 1 WHERE key = 'bootstrap.n'")
        assert changed != before and content_state(con) == before
    finally:
        con.close()
