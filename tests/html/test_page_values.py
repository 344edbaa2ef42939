"""The pages show exactly the values analysis computes: the report document of `tame-wh report
--json` (`build_report`) is what a run's page renders, in the report file and the dashboard."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.html.conftest import cli, run_ids
from warehouse.analysis.pages import run_page_data, site_data
from warehouse.analysis.report import build_report
from warehouse.html.dashboard import build_dashboard, run_href
from warehouse.html.markup import esc, fmt, fmt_interval
from warehouse.html.report_file import render_report_html
from warehouse.store.connection import connect


@pytest.fixture
def demo_con(demo_db: Path) -> Iterator[Any]:
    con = connect(demo_db, read_only=True)
    try:
        yield con
    finally:
        con.close()


def _text(page: str) -> str:
    """The page's markup outside script elements (what a reader sees, still escaped)."""
    return re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)


def _shown(doc: dict[str, Any]) -> list[str]:
    """Values of a report document as a run page writes them."""
    interval = next(i for i in doc["intervals"] if i["metric"] == "composite")
    composite = doc["composite"]["composite"]
    return [
        esc(doc["run"]["run_id"]),
        esc(doc["run"]["model_slug"]),
        f"{doc['run']['n_entries']} ({doc['run']['n_errors']} errored)",
        fmt_interval(composite, interval["ci_lower"], interval["ci_upper"], 4),
        fmt(doc["quality"]["ter"]),
        fmt(doc["quality"]["tm_bleu"]),
        fmt(doc["quality"]["length_ratio"], 3),
        *(fmt(b["mean_source_exposure"], 3) for b in doc["bins"]),
        fmt(doc["gengap"]["gengap_chrf"]),
        *(esc(w) for w in doc["warnings"]),
    ]


def test_the_report_file_renders_the_report_document(demo_copy, tmp_path):
    doc = json.loads(cli(demo_copy, "report", "demo-large", "--json"))
    out = tmp_path / "report.html"
    cli(demo_copy, "report", "demo-large", "--html", out)
    page = _text(out.read_text(encoding="utf-8"))
    for value in _shown(doc):
        assert value in page, value


def test_a_run_page_is_the_report_document_and_nothing_else(demo_con):
    data = run_page_data(demo_con, "demo-large")
    assert data.doc == build_report(demo_con, "demo-large")
    doctored = copy.deepcopy(data.doc)
    doctored["quality"]["ter"] = 98.7654
    doctored["composite"]["composite"] = 0.123456
    doctored["run"]["model_slug"] = "<b>made-up</b>"
    doctored["warnings"] = ["only this <warning>"]
    page = _text(render_report_html(dataclasses.replace(data, doc=doctored)))
    assert "98.77" in page and "0.1235 [" in page
    assert "&lt;b&gt;made-up&lt;/b&gt;" in page and "<b>made-up</b>" not in page
    assert "only this &lt;warning&gt;" in page
    assert all(esc(w) not in page for w in data.doc["warnings"])


def test_dashboard_run_pages_render_each_runs_report_document(demo_db, demo_con, tmp_path):
    site = site_data(demo_con)
    out = tmp_path / "site"
    build_dashboard(site, out)
    for run_id in run_ids(demo_db).values():
        doc = build_report(demo_con, run_id)
        assert site.docs[run_id] == doc
        page = _text((out / run_href(run_id)).read_text(encoding="utf-8"))
        for value in _shown(doc):
            assert value in page, (run_id, value)
