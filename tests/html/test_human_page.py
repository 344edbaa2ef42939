"""The dashboard's human-judgment page: linked from its test set, agreement table and chart,
error categories per run, segments with their error spans marked; hostile text (in sources,
hypotheses, categories and comments) shown literally in a real browser and never run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.html.conftest import HOSTILE, IMG_ONERROR, SCRIPT_BREAKOUT, SCRIPT_TAG, cli
from tests.mqm import HEADER, marked
from warehouse.analysis.pages import site_data
from warehouse.html.dashboard import build_dashboard
from warehouse.html.human_page import marked_text
from warehouse.store.schema import open_warehouse

SOURCES = ["Der Fluss ist breit.", f"Sag {SCRIPT_TAG}", "Der Markt öffnet früh."]
TARGETS = {
    "ref": ["The river is wide.", "Say hello.", "The market opens early."],
    "good": ["The river is wide.", f"Say {SCRIPT_TAG}", "The market opens early."],
    "odd": ["The river wide is.", IMG_ONERROR, "Market opens."],
    "bad": ["River.", SCRIPT_BREAKOUT, "The market."],
}
# (system, segment, span, category, severity)
ERRORS = [
    ("ref", 0, None, "No-error", "No-error"), ("ref", 1, None, "No-error", "No-error"),
    ("ref", 2, None, "No-error", "No-error"),
    ("good", 0, None, "No-error", "No-error"), ("good", 1, (4, 12), "Fluency/Grammar", "Minor"),
    ("good", 2, None, "No-error", "No-error"),
    ("odd", 0, (10, 18), "Fluency/Grammar", "Major"), ("odd", 1, (0, 5), SCRIPT_TAG, "Major"),
    ("odd", 2, (0, 6), "Accuracy/Omission", "Minor"),
    ("bad", 0, (0, 6), "Accuracy/Omission", "Major"),
    ("bad", 1, (0, 9), "Source error", "Major"),
    ("bad", 2, (4, 10), "Accuracy/Omission", "Major"),
    ("bad", 2, (0, 11), "Style/Awkward", "Minor"),
]  # fmt: skip


def _tsv(path: Path) -> Path:
    lines = [HEADER + "\tcomment"]
    for system, seg, span, category, severity in ERRORS:
        target = marked(TARGETS[system][seg], span)
        lines.append("\t".join([system, "d", "1", str(seg + 1), "r1", SOURCES[seg], target,
                                category, severity, IMG_ONERROR]))  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def human_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("human-site")
    db = folder / "wh.duckdb"
    cli(db, "ingest", "--mqm", _tsv(folder / "mqm.tsv"), "--reference-system", "ref",
        "--testset", "judged")  # fmt: skip
    con = open_warehouse(db)
    try:
        build_dashboard(site_data(con), folder / "site")
    finally:
        con.close()
    return folder / "site"


def test_spans_are_marked_and_their_text_escaped():
    spans = [{"start": 4, "end": 9, "category": "<c>", "severity": "Major"},
             {"start": 6, "end": 12, "category": "d", "severity": "Minor"}]  # fmt: skip
    html = marked_text("Say <b>hi</b>!", spans)
    assert html == (
        'Say <mark class="major" title="Major &lt;c&gt;">&lt;b</mark>'
        '<mark class="major" title="Major &lt;c&gt;; Minor d">&gt;hi</mark>'
        '<mark class="minor" title="Minor d">&lt;/b</mark>&gt;!'
    )
    assert marked_text("abc", [{"start": 1, "end": 99, "category": "x", "severity": "Minor"}]) == (
        'a<mark class="minor" title="Minor x">bc</mark>'
    )
    assert marked_text("a<b", []) == "a&lt;b"
    assert (
        marked_text("abc", [{"start": None, "end": None, "category": "x", "severity": "M"}])
        == "abc"
    )


def test_the_page_is_linked_from_its_test_set_and_holds_every_section(human_site):
    [page] = list((human_site / "human").glob("judged-*.html"))
    [testset] = list((human_site / "testsets").glob("judged-*.html"))
    assert f'href="../human/{page.name}"' in testset.read_text(encoding="utf-8")
    text = page.read_text(encoding="utf-8")
    for section in ("agreement-table", "agreement-chart", "categories", "judged-segments"):
        assert f'id="{section}"' in text, section
    assert '<mark class="major" title="Fluency/Grammar' not in text  # severity comes first
    assert '<mark class="major" title="Major Fluency/Grammar">wide is.</mark>' in text
    assert "<script>window.__pwned" not in text and 'onerror="window' not in text


def test_the_page_in_a_browser_draws_its_chart_and_runs_no_hostile_text(
    human_site, browser, load_ok
):
    [page] = list((human_site / "human").glob("judged-*.html"))
    load_ok(page)
    assert browser.js("return document.body.getAttribute('data-charts')") == "ready"
    drawn = browser.js(
        "return document.querySelectorAll('#agreement-chart svg [role=graphics-symbol]').length"
    )
    assert drawn > 0
    assert browser.js("return window.__pwned === undefined")
    assert browser.js("return document.images.length") == 0
    browser.js("document.querySelectorAll('details').forEach(function (d) { d.open = true; });")
    text = browser.js("return document.body.innerText")
    for hostile in HOSTILE:
        assert hostile in text, hostile
    marks = browser.js("return document.querySelectorAll('mark').length")
    assert marks >= 8
    titles = browser.js(
        "return Array.from(document.querySelectorAll('mark')).map(function (m) { return m.title; })"
    )
    assert f"Major {SCRIPT_TAG}" in titles
