"""`tame-wh dashboard`: a static site over the whole warehouse.

DIR/index.html            leaderboard per test set, links to everything
DIR/runs/RUN.html         one page per run (the report page)
DIR/testsets/NAME-ID.html one page per test set: audits, exposure distribution, runs
DIR/compare/A-vs-B.html   one page per pair asked for with --compare A B
DIR/assets/               vega.js (Vega, Vega-Lite, vega-embed), tame.js, and data/ with the
                          segment columns a test set and its audit share across run pages

Every page opens from the file system with no network. Pages are written only when their bytes
change, and pages of runs, test sets or comparisons that are gone are removed; a rebuild from
what the last build was made from stops before reading anything (warehouse/html/build_state.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from warehouse.analysis.leaderboard import TRAIN_RULE
from warehouse.analysis.pages import SiteData
from warehouse.analysis.segments import EMPTY_RUN_COLUMNS, segment_key
from warehouse.basics import Notify
from warehouse.errors import UsageError
from warehouse.html.assets import page_script, vega_bundle, vega_bundle_header
from warehouse.html.build_state import DashboardResult, clear_state, record_state
from warehouse.html.files import write_if_changed
from warehouse.html.human_page import human_page
from warehouse.html.layout import Assets
from warehouse.html.markup import safe_name
from warehouse.html.run_page import RunLinks, SegmentData, run_page, shared_script
from warehouse.html.site_pages import (
    ComparePair,
    compare_page,
    index_page,
    run_label,
    testset_page,
)
from warehouse.html.trend_page import trend_page
from warehouse.store.corpora import CorpusInfo

# Folders whose files the dashboard owns: files there that a build did not produce are removed.
_OWNED = {"runs": ".html", "testsets": ".html", "compare": ".html", "assets/data": ".js"}
_MARKER = "assets/tame.js"


def run_href(run_id: str, prefix: str = "") -> str:
    """Address of a run page relative to a page in `prefix` (`""` at the top, `"../"` below)."""
    return f"{prefix}runs/{safe_name(run_id)}.html"


def testset_href(info: CorpusInfo, prefix: str = "") -> str:
    """Address of a test set page."""
    return f"{prefix}testsets/{safe_name(info.name, info.corpus_id)}.html"


def human_href(info: CorpusInfo, prefix: str = "") -> str:
    """Address of a test set's human-judgment page."""
    return f"{prefix}human/{safe_name(info.name, info.corpus_id)}.html"


def model_href(model_slug: str, prefix: str = "") -> str:
    """Address of a model's page."""
    digest = hashlib.sha256(model_slug.encode()).hexdigest()[:8]
    return f"{prefix}models/{safe_name(model_slug, digest)}.html"


def compare_href(run_a: str, run_b: str, prefix: str = "") -> str:
    """Address of the comparison page of two runs."""
    return f"{prefix}compare/{safe_name(run_a)}-vs-{safe_name(run_b)}.html"


def check_site_folder(out: str | Path) -> None:
    """Refuse a dashboard folder that holds other things than a dashboard."""
    # Stale pages are deleted from a dashboard's folder, so it may hold nothing else.
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / _MARKER).is_file():
        raise UsageError(
            f"--out {out} is not empty and holds no tame-wh dashboard; give a new or empty folder"
        )


def build_dashboard(
    data: SiteData, out: str | Path, *, notify: Notify | None = None, state: str | None = None
) -> DashboardResult:
    """Build (or bring up to date) the dashboard of `data` (a whole warehouse's) under `out`;
    with `state` (`dashboard_state`), record it for the next build."""
    say = notify or (lambda _m: None)
    root = Path(out)
    check_site_folder(root)
    clear_state(root)  # a build that stops half way must not leave the last one's record
    bundle = None if _bundle_is_current(root / "assets" / "vega.js") else vega_bundle()
    board, docs = data.board, data.docs
    n_pairs = len(data.comparisons)
    result = DashboardResult(str(root), len(board), len(data.test_sets), n_pairs)
    say(f"dashboard: {result.runs} runs, {result.test_sets} test sets, {n_pairs} comparisons")
    produced: set[str] = set()

    def emit(relative: str, text: str) -> None:
        produced.add(relative)
        if write_if_changed(root / relative, text.encode("utf-8")):
            result.written += 1
            result.files.append(relative)
        else:
            result.unchanged += 1

    if bundle is None:
        produced.add("assets/vega.js")
        result.unchanged += 1
    else:
        emit("assets/vega.js", bundle)
    emit("assets/tame.js", page_script())
    for key, shared_json in data.shared.items():
        emit(_data_file(key), shared_script(key, shared_json))
    for relative, text in _run_pages(data):
        emit(relative, text)
    for info in data.test_sets:
        emit(
            testset_href(info),
            testset_page(
                info,
                data.audits.get(info.corpus_id, []),
                data.histograms,
                [r for r in board if r["test_corpus_id"] == info.corpus_id],
                run_href=lambda run_id: run_href(run_id, "../"),
                human_href=human_href(info, "../") if info.corpus_id in data.human else None,
            ),
        )
        if info.corpus_id in data.human:
            emit(
                human_href(info),
                human_page(info, data.human[info.corpus_id],
                           run_href=lambda run_id: run_href(run_id, "../"),
                           testset_href=testset_href(info, "../")),
            )  # fmt: skip
    for trend in data.trends:
        emit(
            model_href(trend.model_slug),
            trend_page(trend, run_href=lambda run_id: run_href(run_id, "../")),
        )
    labels = {r["run_id"]: f"{run_label(r)} ({r['run_id'][:8]})" for r in board}
    pages = []
    for a, b, comparison in data.comparisons:
        pair = ComparePair(a, b, labels[a], labels[b], compare_href(a, b))
        pages.append(pair)
        note = None if docs[a]["exposure"] else "no audit: the test set has no exposure bins"
        emit(
            pair.href,
            compare_page(
                pair,
                comparison,
                docs[a]["bins"],
                docs[b]["bins"],
                bins_note=note,
                run_href=lambda run_id: run_href(run_id, "../"),
            ),
        )
    emit(
        "index.html",
        index_page(
            board,
            data.test_sets,
            pages,
            train_rule=TRAIN_RULE,
            run_href=run_href,
            testset_href=testset_href,
            models=[(t.model_slug, model_href(t.model_slug), len(t.runs)) for t in data.trends],
            replicates=data.replicates,
        ),
    )
    result.removed = _remove_stale(root, produced)
    result.files.sort()
    if state is not None:
        record_state(root, state, result, produced)
    return result


def _data_file(key: str) -> str:
    """The file holding one test set's and audit's shared segment columns."""
    return f"assets/data/{safe_name(key)}.js"


def _bundle_is_current(path: Path) -> bool:
    """Whether a dashboard's vega.js already is the bundle this installation makes (its first
    line names the versions that made it), so it need not be made again (a second or two)."""
    header = vega_bundle_header().encode("utf-8")
    try:
        with path.open("rb") as existing:
            return existing.read(len(header)) == header
    except OSError:
        return False


def _run_pages(data: SiteData) -> Iterator[tuple[str, str]]:
    """Every run page."""
    by_id = {info.corpus_id: info for info in data.test_sets}
    for row in data.board:
        doc = data.docs[row["run_id"]]
        test_corpus_id = doc["run"]["test_corpus_id"]
        audit_id = data.default_audit.get(test_corpus_id)
        key = segment_key(test_corpus_id, audit_id)
        segments = SegmentData(
            key=key,
            shared_json="",
            run_json=data.run_columns.get(row["run_id"], EMPTY_RUN_COLUMNS),
            shared_src=f"../{_data_file(key)}",
        )
        info = by_id.get(test_corpus_id)
        links = RunLinks(index="../index.html", testset=testset_href(info, "../") if info else None)
        yield (
            run_href(row["run_id"]),
            run_page(
                doc,
                histogram=data.histograms.get(audit_id, []) if audit_id else [],
                segments=segments,
                assets=Assets("../assets/"),
                links=links,
            ),
        )


def _remove_stale(root: Path, produced: set[str]) -> int:
    """Delete pages and data files in the dashboard's own folders that this build did not
    produce (runs, test sets or comparisons that are gone), and leftover temporary files."""
    removed = 0
    site = root.resolve()
    for folder, suffix in _OWNED.items():
        directory = root / folder
        # A folder that is a link (or leads out of the site) is someone else's: nothing in it is
        # deleted.
        if not directory.is_dir() or directory.is_symlink():
            continue
        if not directory.resolve().is_relative_to(site):
            continue
        for path in directory.iterdir():
            relative = path.relative_to(root).as_posix()
            stale = path.suffix == suffix and relative not in produced
            leftover = path.name.startswith(".") and path.name.endswith(".tmp")
            if path.is_file() and not path.is_symlink() and (stale or leftover):
                path.unlink()
                removed += 1
    return removed
