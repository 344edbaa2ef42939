"""The dashboard page of a test set's human judgments (docs/html.md): agreement of each metric
with people, error categories per run, and the segments on which systems differ most with the
annotated error spans marked. Every text is escaped."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from warehouse.analysis.human_pages import HumanPageData
from warehouse.analysis.meta import STATISTIC_LABELS
from warehouse.html.charts import chart_block
from warehouse.html.layout import Assets, page
from warehouse.html.markup import Raw, esc, fmt, link, table
from warehouse.metrics.registry import label
from warehouse.store.corpora import CorpusInfo

_TOP_CATEGORIES = 6  # category columns of the error table


def marked_text(text: str, spans: Sequence[dict[str, Any]]) -> str:
    """The text escaped, each annotated span inside a `<mark>` whose title names its errors
    (overlapping spans split where they meet)."""
    inside = [
        {**s, "start": min(int(s["start"]), len(text)), "end": min(int(s["end"]), len(text))}
        for s in spans
        if s.get("start") is not None and s.get("end") is not None
    ]
    cuts = sorted({0, len(text), *(s["start"] for s in inside), *(s["end"] for s in inside)})
    out = []
    for start, end in itertools.pairwise(cuts):
        piece = esc(text[start:end])
        covering = [s for s in inside if s["start"] <= start and end <= s["end"] and start < end]
        if covering:
            title = "; ".join(f"{s['severity']} {s['category']}" for s in covering)
            major = any(str(s["severity"]).lower() in ("major", "critical") for s in covering)
            out.append(f'<mark class="{"major" if major else "minor"}" title="{esc(title)}">'
                       f"{piece}</mark>")  # fmt: skip
        else:
            out.append(piece)
    return "".join(out)


def _agreement(data: HumanPageData) -> str:
    report = data.report
    if report is None:
        return f'<p class="empty">{esc(data.note)}</p>'
    rows = [r for r in report.rows if r.bin == "all"]
    stats = table(
        ["metric", "level", "statistic", "value", "interval", "n"],
        [[label(r.metric), r.level, STATISTIC_LABELS[r.statistic], fmt(r.value, 3),
          "" if r.low is None else f"[{fmt(r.low, 3)}, {fmt(r.high, 3)}]", r.n] for r in rows],
        numeric=(3, 5),
        table_id="agreement-table",
    )  # fmt: skip
    sign = -1 if report.scheme == "mqm" else 1  # the chart's human axis: higher is better
    points = [
        {"system": s["label"], "metric": label(m), "metric_score": s.get(m),
         "human": sign * s["human"]}
        for s in report.systems
        for m in ("bleu", "chrf_plus_plus", "ter")
        if s.get(m) is not None
    ]  # fmt: skip
    chart = chart_block("agreement-chart", "agreement", {"agreement": points})
    binned = [r for r in report.rows if r.bin != "all"]
    by_bin = ""
    if binned:
        by_bin = "<h3>Per exposure bin</h3>" + table(
            ["bin", "metric", "level", "statistic", "value", "n"],
            [[r.bin, label(r.metric), r.level, STATISTIC_LABELS[r.statistic], fmt(r.value, 3), r.n]
             for r in binned],
            numeric=(4, 5),
            table_id="agreement-bins",
        )  # fmt: skip
    intro = (
        f"<p>{report.n_systems} systems, {report.n_segments} segments judged for all; human "
        f"score {esc(report.human)}; intervals: {report.bootstrap['n']} resamples of segments, "
        f"seed {report.bootstrap['seed']}.</p>"
    )
    return intro + stats + chart + by_bin


def _categories(data: HumanPageData, run_href: Callable[[str], str]) -> str:
    """One row per run: its errors, its weight per judged segment, and that weight split over
    the categories that weigh most across all runs (every severity together)."""
    if not data.categories:
        return '<p class="empty">No errors annotated.</p>'
    totals: dict[str, float] = {}
    for c in data.categories:
        totals[c["category"]] = totals.get(c["category"], 0.0) + float(c["weight"] or 0)
    top = sorted(totals, key=lambda k: (-totals[k], k))[:_TOP_CATEGORIES]
    runs: dict[str, dict[str, Any]] = {}
    for c in data.categories:
        run = runs.setdefault(c["run_id"], {"c": c, "errors": 0, "total": 0.0, "by": {}})
        run["errors"] += c["n_errors"]
        run["total"] += c["weight_per_segment"] or 0.0
        key = c["category"] if c["category"] in top else "other"
        run["by"][key] = run["by"].get(key, 0.0) + (c["weight_per_segment"] or 0.0)
    ordered = sorted(runs.items(), key=lambda item: item[1]["total"])
    columns = ["run", "system", "errors", "weight per segment", *top, "other"]
    return (
        table(
            columns,
            [
                [
                    Raw(link(run_href(run_id), run_id[:8], "mono")),
                    _system(r["c"]),
                    r["errors"],
                    fmt(r["total"], 3),
                    *(fmt(r["by"].get(k, 0.0), 3) for k in (*top, "other")),
                ]
                for run_id, r in ordered
            ],
            numeric=tuple(range(2, len(columns))),
            table_id="categories",
        )
        + "<p>Weights per judged segment (MQM weights of docs/human.md); lowest total first.</p>"
    )


def _system(row: dict[str, Any]) -> str:
    """`model/condition`."""
    return f"{row['model_slug']}/{row['condition']}" if row["condition"] else row["model_slug"]


def _segments(data: HumanPageData) -> str:
    if not data.segments:
        return '<p class="empty">No judged segments.</p>'
    parts = []
    for n, segment in enumerate(data.segments):
        rows = "".join(
            f"<tr><td>{esc(s['label'])}</td><td class=num>{fmt(s['score'], 2)}</td>"
            f"<td>{marked_text(s['hyp'], s['errors'])}</td></tr>"
            for s in segment["systems"]
        )
        parts.append(
            f'<details class="segment"{" open" if n == 0 else ""}><summary>segment '
            f"{esc(segment['seg_key'])}: "
            f"{esc(segment['source'])}</summary><p>reference: {esc(segment['reference'])}</p>"
            f'<table class="data"><thead><tr><th scope="col">system</th>'
            f'<th scope="col" class=num>score</th><th scope="col">hypothesis (errors marked)'
            f"</th></tr></thead><tbody>{rows}</tbody></table></details>"
        )
    return "".join(parts)


def human_page(
    info: CorpusInfo, data: HumanPageData, *, run_href: Callable[[str], str], testset_href: str
) -> str:
    """The human-judgment page of one test set."""
    body = (
        f'<section id="about"><h2>Human judgments of {esc(info.name)}</h2><p>judgment set '
        f"{esc(data.set_name)} ({esc(data.scheme.upper())}), the newest of the test set.</p>"
        "</section>"
        f'<section id="agreement"><h2>Metric-human agreement</h2>{_agreement(data)}</section>'
        f'<section id="error-categories"><h2>Error categories per run</h2>'
        f"{_categories(data, run_href)}</section>"
        f'<section id="judged-segments"><h2>Segments where the systems differ most</h2>'
        f"{_segments(data)}</section>"
    )
    nav = f"<nav>{link('../index.html', 'dashboard')} · {link(testset_href, 'test set')}</nav>"
    return page(f"human judgments: {info.name}", body, assets=Assets("../assets/"), nav=nav)
