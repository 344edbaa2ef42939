"""The pages in a real browser (headless chromium): they load offline with a clean console, their
charts have marks and data, the segment table sorts and filters, links resolve, and hostile
text is shown literally and never runs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tests.html.conftest import HOSTILE, Browser, run_ids
from warehouse.analysis.pages import run_page_data, site_data
from warehouse.html.dashboard import build_dashboard
from warehouse.html.report_file import write_report_html
from warehouse.store.schema import open_warehouse

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_ENV = "TAME_WH_UPDATE_SCREENSHOTS"  # set: refresh docs/img/*.png from this test


def _build(db: Path, out: Path, compare=()) -> Path:
    con = open_warehouse(db)
    try:
        build_dashboard(site_data(con, compare), out)
    finally:
        con.close()
    return out


@pytest.fixture(scope="module")
def demo_site(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo-site")
    db = folder / "demo.duckdb"
    shutil.copy(demo_db, db)
    return _build(db, folder / "site", [("demo-large", "demo-small/few-shot")])


@pytest.fixture(scope="module")
def hostile_site(hostile_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile-site")
    db = folder / "hostile.duckdb"
    shutil.copy(hostile_db, db)
    out = _build(db, folder / "site")
    con = open_warehouse(db)
    try:
        write_report_html(run_page_data(con, "evil-model"), folder / "evil-report.html")
    finally:
        con.close()
    return out


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def _marks(browser: Browser) -> dict[str, int]:
    """Drawn mark items (bars, rules, points, labels) per chart of the page."""
    return browser.js(
        "var out = {}; document.querySelectorAll('[data-chart]').forEach(function (el) {"
        "  out[el.id] = el.querySelectorAll('svg [role=graphics-symbol]').length; });"
        "return out;"
    )


def _cells(browser: Browser, column: int) -> list[str]:
    """The text of one column of the segment table, top to bottom."""
    return browser.js(
        "return Array.from(document.querySelectorAll('#segments tbody tr'))"
        f".map(function (tr) {{ return tr.cells[{column}].textContent; }});"
    )


def test_every_dashboard_page_loads_offline_with_a_clean_console_and_drawn_charts(
    demo_site, browser, load_ok, tmp_path
):
    pages = _pages(demo_site)
    assert len(pages) == 7  # index, 3 runs, 1 test set, 1 comparison, 1 model
    charts = 0
    for path in pages:
        load_ok(path)
        assert browser.js("return document.body.getAttribute('data-charts')") == "ready", path
        marks = _marks(browser)
        assert marks and all(n > 0 for n in marks.values()), (path, marks)
        charts += len(marks)
        assert browser.js("return window.vegaEmbed !== undefined")
        shot = tmp_path / f"{path.relative_to(demo_site).as_posix().replace('/', '_')}.png"
        assert browser.screenshot(shot).stat().st_size > 10_000
    assert charts == 1 + 3 * 5 + 1 + 1 + 1  # board; 5 per run page; exposure; deltas; trend


def test_run_page_charts_hold_their_data(demo_site, browser, load_ok):
    large = run_ids(demo_site.parent / "demo.duckdb")["demo-large/zero-shot"]
    load_ok(demo_site / "runs" / f"{large}.html")
    sizes = browser.js(
        "var v = window.tameViews; return {"
        "bins: v['chart-bins'].data('bins').length,"
        "exposure: v['chart-exposure'].data('exposure').length,"
        "inputs: v['chart-composite'].data('inputs').length,"
        "intervals: v['chart-intervals'].data('intervals').length,"
        "breakdowns: v['chart-breakdowns'].data('breakdowns').length};"
    )
    assert sizes["bins"] == 5 * 2 * 2  # bins x (chrF++, BLEU) x (system, TM)
    assert sizes["exposure"] > 3 * 2 and sizes["inputs"] == 5
    assert sizes["intervals"] >= 4 and sizes["breakdowns"] >= 5
    whiskers = browser.js(
        "return window.tameViews['chart-bins'].data('bins')"
        ".filter(function (r) { return r.lower !== null; }).length"
    )
    assert whiskers == 2  # the whole-run chrF++ and BLEU intervals
    if os.environ.get(SCREENSHOT_ENV):
        browser.screenshot(ROOT / "docs" / "img" / "report.png", width=1280, height=2400)


def test_segment_table_sorts_and_filters(demo_site, browser, load_ok):
    large = run_ids(demo_site.parent / "demo.duckdb")["demo-large/zero-shot"]
    load_ok(demo_site / "runs" / f"{large}.html")
    count = "return document.getElementById('segment-count').textContent"
    assert browser.js(count) == "40 of 40 segments"
    chrf = [float(v) for v in _cells(browser, 8)]
    assert len(chrf) == 40 and chrf == sorted(chrf)  # worst first
    header = "document.querySelector('#segments th[data-key=\"{}\"] button').click()"
    browser.js(header.format("chrf"))
    assert [float(v) for v in _cells(browser, 8)] == sorted(chrf, reverse=True)
    browser.js(header.format("exposure"))
    exposure = [float(v) for v in _cells(browser, 6)]
    assert exposure == sorted(exposure)
    sort = "return document.querySelector('#segments th[data-key=\"exposure\"]')"
    assert browser.js(sort + ".getAttribute('aria-sort')") == "ascending"
    browser.js(header.format("id"))
    ids = _cells(browser, 0)
    assert ids[0] <= ids[1] and sorted(ids) == sorted(set(ids))

    search = browser.driver.find_element("id", "segment-filter")
    search.send_keys("MERCADO")
    rows = browser.js(
        "return Array.from(document.querySelectorAll('#segments tbody tr'))"
        ".map(function (tr) { return tr.textContent.toLowerCase(); });"
    )
    assert 0 < len(rows) < 40 and all("mercado" in r for r in rows)
    assert browser.js(count) == f"{len(rows)} of 40 segments"
    search.clear()
    browser.js("document.getElementById('segment-filter').dispatchEvent(new Event('input'))")
    browser.js(
        "var s = document.getElementById('segment-bin'); s.value = 'far';"
        "s.dispatchEvent(new Event('change'));"
    )
    bins = _cells(browser, 7)
    assert bins and set(bins) == {"far"} and len(bins) == 14  # the demo's far bin
    assert browser.js(count) == "14 of 40 segments"


def test_links_resolve_and_every_page_is_reachable_from_the_index(demo_site, browser, load_ok):
    index = demo_site / "index.html"
    seen: set[Path] = set()
    todo = [index]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        load_ok(page)
        for href in browser.js(
            "return Array.from(document.links).map(function (a) { return a.href; });"
        ):
            url = urlparse(href)
            assert url.scheme == "file", (page, href)
            target = Path(unquote(url.path))
            assert target.is_file(), (page, href)
            todo.append(target.resolve())
    assert seen == {p.resolve() for p in _pages(demo_site)}


def test_hostile_text_is_shown_literally_and_never_runs(hostile_site, browser, load_ok):
    evil = run_ids(hostile_site.parent / "hostile.duckdb")["evil-model/x<b>y"]
    pages = [
        hostile_site / "runs" / f"{evil}.html",
        hostile_site.parent / "evil-report.html",
        hostile_site / "index.html",
        next((hostile_site / "testsets").glob("evil-i-set-*.html")),
    ]
    for path in pages:
        load_ok(path)
        assert browser.js("return window.__pwned === undefined"), path
        assert "pwned" not in browser.js("return document.title"), path
        assert browser.js("return document.images.length") == 0, path
        text = browser.js("return document.body.innerText")
        assert "evil<i>set" in text or path.name == f"{evil}.html"
    for path in pages[:2]:
        load_ok(path)
        hyps = _cells(browser, 3)
        sources = _cells(browser, 1)
        tm_targets = _cells(browser, 5)
        for text in HOSTILE:
            assert text in hyps, (path, text)
        assert f"Say {HOSTILE[0]}" in sources and HOSTILE[1] in sources
        assert HOSTILE[2] in tm_targets  # the training target shown as a TM neighbour
        title = browser.js("return document.querySelector('h1').textContent")
        assert title == "evil-model/x<b>y on evil<i>set"
        assert browser.js("return document.title") == title


def test_pages_without_an_audit_and_an_empty_warehouse_load_clean(
    hostile_site, browser, load_ok, tmp_path
):
    plain = run_ids(hostile_site.parent / "hostile.duckdb")["plain-model"]
    load_ok(hostile_site / "runs" / f"{plain}.html")
    assert "no audit" in browser.js("return document.body.innerText")
    marks = _marks(browser)  # no exposure or bins charts without an audit
    assert set(marks) == {"chart-composite", "chart-intervals", "chart-breakdowns"}
    assert all(n > 0 for n in marks.values())
    assert len(_cells(browser, 0)) == 3 and set(_cells(browser, 4)) == {""}
    load_ok(next((hostile_site / "testsets").glob("plain-*.html")))
    assert browser.js("return document.getElementById('no-audit') !== null")
    empty = _build(tmp_path / "empty.duckdb", tmp_path / "site")
    load_ok(empty / "index.html")
    assert "There are no runs" in browser.js("return document.body.innerText")


def test_the_harness_sees_console_errors_and_network_requests(browser, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><html><body><script>"
        "console.error('boom'); fetch('http://example.invalid/x').catch(function () {});"
        "document.body.setAttribute('data-charts', 'ready');"
        "</script></body></html>",
        encoding="utf-8",
    )
    load = browser.load(page)
    assert any("boom" in e["message"] for e in load.console)
    assert any(url.startswith("http://example.invalid/") for url in load.requests)


def test_a_missing_browser_fails_under_ci_and_skips_elsewhere(monkeypatch, tmp_path):
    from tests.html.conftest import missing_browser, no_browser

    why = missing_browser((tmp_path / "chromium", tmp_path / "chromedriver"))
    assert why is not None and "chromium" in why
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run the browser tests"):
        no_browser(why)
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        no_browser(why)
