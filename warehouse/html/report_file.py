"""`tame-wh report RUN --html FILE`: one self-contained HTML file for a run."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb

from warehouse.analysis.report import build_report
from warehouse.html.files import write_if_changed
from warehouse.html.layout import Assets
from warehouse.html.run_page import RunLinks, SegmentData, run_page
from warehouse.html.segments import exposure_histograms, run_columns, shared_columns

EMPTY_RUN_COLUMNS = '{"hyp":[],"chrf":[],"err":[]}'


@dataclass(frozen=True)
class ReportFile:
    """A written (or already up-to-date) report file."""

    path: str
    run_id: str
    bytes: int
    written: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def segment_key(test_corpus_id: str, audit_id: str | None) -> str:
    """The name of a test set's (and audit's) shared segment columns."""
    return f"{test_corpus_id}-{audit_id or 'no-audit'}"


def render_report_html(
    con: duckdb.DuckDBPyConnection, run_ref: str, *, train: str | None = None
) -> tuple[str, str]:
    """The run id and the self-contained page of a run (scripts and data inlined)."""
    doc = build_report(con, run_ref, train=train)
    run_id = doc["run"]["run_id"]
    audit_id = doc["exposure"]["audit_id"] if doc["exposure"] else None
    test_corpus_id = doc["run"]["test_corpus_id"]
    segments = SegmentData(
        key=segment_key(test_corpus_id, audit_id),
        shared_json=shared_columns(con, test_corpus_id, audit_id),
        run_json=run_columns(con, [run_id]).get(run_id, EMPTY_RUN_COLUMNS),
    )
    histogram = exposure_histograms(con, [audit_id])[audit_id] if audit_id else []
    page = run_page(doc, histogram=histogram, segments=segments, assets=Assets(), links=RunLinks())
    return run_id, page


def write_report_html(
    con: duckdb.DuckDBPyConnection, run_ref: str, path: str | Path, *, train: str | None = None
) -> ReportFile:
    """Write the run's report page to `path` (left alone when it already holds this page)."""
    run_id, page = render_report_html(con, run_ref, train=train)
    data = page.encode("utf-8")
    written = write_if_changed(Path(path), data)
    return ReportFile(str(path), run_id, len(data), written)
