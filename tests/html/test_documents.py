"""The dashboard's documents of all runs at once equal `build_report` of each run."""

from __future__ import annotations

from pathlib import Path

from warehouse.analysis.leaderboard import leaderboard
from warehouse.analysis.report import build_report
from warehouse.html.documents import report_documents
from warehouse.store.connection import connect


def _assert_equal_to_build_report(db: Path) -> int:
    con = connect(db, read_only=True)
    try:
        board = leaderboard(con)
        docs = report_documents(con, board)
        assert set(docs) == {r["run_id"] for r in board}
        for row in board:
            assert docs[row["run_id"]] == build_report(con, row["run_id"])
        return len(board)
    finally:
        con.close()


def test_bulk_documents_equal_build_report_for_every_demo_run(demo_db):
    assert _assert_equal_to_build_report(demo_db) == 3


def test_bulk_documents_equal_build_report_with_and_without_an_audit(hostile_db):
    assert _assert_equal_to_build_report(hostile_db) == 2


def test_no_runs_no_documents(tmp_path):
    from warehouse.store.schema import open_warehouse

    con = open_warehouse(tmp_path / "empty.duckdb")
    try:
        assert report_documents(con, leaderboard(con)) == {}
    finally:
        con.close()
