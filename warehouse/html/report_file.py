"""`tame-wh report RUN --html FILE`: one self-contained HTML file for a run."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from warehouse.analysis.pages import RunPageData
from warehouse.html.files import write_if_changed
from warehouse.html.layout import Assets
from warehouse.html.run_page import RunLinks, SegmentData, run_page


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


def render_report_html(data: RunPageData) -> str:
    """The self-contained page of a run (scripts and data inlined)."""
    segments = SegmentData(
        key=data.segment_key, shared_json=data.shared_columns, run_json=data.run_columns
    )
    return run_page(
        data.doc, histogram=data.histogram, segments=segments, assets=Assets(), links=RunLinks()
    )


def write_report_html(data: RunPageData, path: str | Path) -> ReportFile:
    """Write a run's report page to `path` (left alone when it already holds this page)."""
    page = render_report_html(data).encode("utf-8")
    written = write_if_changed(Path(path), page)
    return ReportFile(str(path), data.doc["run"]["run_id"], len(page), written)
