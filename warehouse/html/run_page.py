"""The page of one run: everything `build_report` knows, as tables and charts, plus the segments.

A run page is the same whether it is a report file (`tame-wh report RUN --html FILE`, scripts
inlined) or a dashboard page (scripts under `assets/`); only its links and script sources differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from warehouse.exposure.config import binned_side
from warehouse.html.charts import BIN_ORDER, chart_block
from warehouse.html.layout import Assets, Script, page
from warehouse.html.markup import (
    Raw,
    esc,
    escape_script_json,
    fields,
    fmt,
    fmt_interval,
    fmt_share,
    json_block,
    link,
    table,
)
from warehouse.metrics.registry import label, on_percent_scale, score_digits

NO_AUDIT = (
    "no audit: this test set has no exposure audit, so there are no exposure histograms, bins, "
    "TM baseline or GenGap (run `tame-wh audit --train NAME --testset {test_set}`)"
)


@dataclass(frozen=True)
class RunLinks:
    """Where a run page links to (None: a stand-alone report file links nowhere)."""

    index: str | None = None
    testset: str | None = None


@dataclass(frozen=True)
class SegmentData:
    """The segment table's JSON: the test set's and audit's part (`key` names it for the page
    script) and the run's own part."""

    key: str
    shared_json: str
    run_json: str
    shared_src: str | None = None  # the shared part as a file the page loads, else inlined


def shared_script(key: str, shared_json: str) -> str:
    """JavaScript registering the shared segment columns under `key` (safe inside <script>)."""
    return (
        "(window.tameShared = window.tameShared || {})"
        f"[{escape_script_json(_js_string(key))}] = {escape_script_json(shared_json)};\n"
    )


def _js_string(text: str) -> str:
    """A JavaScript string literal (JSON's)."""
    return json.dumps(text)


def _interval_of(doc: dict[str, Any], metric: str, scope: str = "all") -> dict[str, Any]:
    """The stored interval of a metric and scope, or an empty dict."""
    return next((i for i in doc["intervals"] if i["metric"] == metric and i["scope"] == scope), {})


def _section(title: str, content: str, section_id: str) -> str:
    """A titled section."""
    return f'<section id="{esc(section_id)}"><h2>{esc(title)}</h2>{content}</section>'


def _empty(text: str) -> str:
    """A box saying what is missing."""
    return f'<p class="empty">{esc(text)}</p>'


def _header(doc: dict[str, Any], links: RunLinks) -> str:
    """Identity of the run, its test set and training corpus, signatures and CI metadata."""
    run, exposure = doc["run"], doc["exposure"]
    test_set = Raw(link(links.testset, run["test_set"])) if links.testset else run["test_set"]
    training = (
        f"{exposure['train_corpus']} (audit {exposure['audit_id']}, {exposure['mode']})"
        if exposure
        else "no audit"
    )
    pairs: list[tuple[str, Any]] = [
        ("run id", Raw(f'<span class="mono">{esc(run["run_id"])}</span>')),
        ("model", run["model_slug"]),
        ("condition", run["condition"] or "-"),
        ("test set", test_set),
        ("training corpus (exposure)", training),
        ("language pair", run["language_pair"]),
        ("dataset id", run["dataset_id"]),
        ("entries", f"{run['n_entries']} ({run['n_errors']} errored)"),
        ("created", str(run["created_at"])),
        ("ingested", str(run["ingested_at"])),
        ("fingerprint", run["fingerprint_hash"]),
    ]
    for key, value in sorted((run.get("ci") or {}).items()):
        pairs.append((f"CI {key}", value))
    signatures: list[tuple[str, Any]] = [
        (f"{name} signature", Raw(f'<span class="mono">{esc(sig)}</span>'))
        for name, sig in doc["signatures"].items()
    ]
    if exposure:
        signatures.append(
            ("exposure signature", Raw(f'<span class="mono">{esc(exposure["signature"])}</span>'))
        )
    return fields(pairs + signatures)


def _warnings(doc: dict[str, Any]) -> str:
    """The report's warnings."""
    if not doc["warnings"]:
        return '<p class="note">No warnings.</p>'
    items = "".join(f"<li>{esc(w)}</li>" for w in doc["warnings"])
    return f'<ul class="warnings" id="warnings">{items}</ul>'


def _quality(doc: dict[str, Any]) -> str:
    """Whole-run scores against the TM baseline, with stored intervals."""
    q = doc["quality"]
    chrf, bleu = _interval_of(doc, "chrf_plus_plus"), _interval_of(doc, "bleu")
    exact = _interval_of(doc, "exact_match_rate")
    rows = [
        [
            "chrF++",
            fmt_interval(q["chrf_plus_plus"], chrf.get("ci_lower"), chrf.get("ci_upper")),
            fmt(q["tm_chrf_plus_plus"]),
            fmt(q["delta_tm_chrf_plus_plus"]),
        ],
        [
            "BLEU",
            fmt_interval(q["bleu"], bleu.get("ci_lower"), bleu.get("ci_upper")),
            fmt(q["tm_bleu"]),
            fmt(q["delta_tm_bleu"]),
        ],
        ["TER", fmt(q["ter"]), "", ""],
        [
            "exact match",
            fmt_interval(q["exact_match_rate"], exact.get("ci_lower"), exact.get("ci_upper"), 3),
            "",
            "",
        ],
        ["length ratio", fmt(q["length_ratio"], 3), "", ""],
    ]
    return table(["metric", "system [interval]", "TM", "system - TM"], rows, numeric=(1, 2, 3))


def _exposure(doc: dict[str, Any], histogram: list[dict[str, Any]]) -> str:
    """Exposure histograms with the thresholds, the per-side summary and PairLeak."""
    exposure = doc["exposure"]
    if not exposure:
        return _empty(NO_AUDIT.format(test_set=doc["run"]["test_set"]))
    thresholds = list(exposure["sides"][0]["at_or_above"])
    rows = [
        [
            s["side"],
            fmt(s["mean"], 3),
            fmt(s["median"], 3),
            fmt(s["p95"], 3),
            fmt(s["max"], 3),
            fmt_share(s["exact_share"]),
            *(fmt_share(v) for v in s["at_or_above"].values()),
        ]
        for s in exposure["sides"]
    ]
    columns = ["side", "mean", "median", "p95", "max", "exact", *[f">= {t}" for t in thresholds]]
    leak = ", ".join(f"@{t} {fmt_share(v)}" for t, v in exposure["pair_leak"].items())
    by = binned_side(exposure.get("side"))
    return (
        f'<p class="note">Exposure of the test set to training corpus '
        f"<b>{esc(exposure['train_corpus'])}</b> ({esc(exposure['train_rule'] or '')}). "
        f"Dashed lines: the bin thresholds (bins are by {by} exposure).</p>"
        + chart_block("chart-exposure", "exposure", {"exposure": histogram})
        + table(columns, rows, numeric=tuple(range(1, len(columns))))
        + (f"<p>PairLeak: {esc(leak)}</p>" if leak else "")
    )


def bin_chart_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the bins chart: system and TM chrF++ and BLEU per bin, whiskers on `all`."""
    rows = []
    for b in doc["bins"]:
        for metric, key, tm_key, stored in (
            ("chrF++", "chrf_plus_plus", "tm_chrf_plus_plus", "chrf_plus_plus"),
            ("BLEU", "bleu", "tm_bleu", "bleu"),
        ):
            interval = _interval_of(doc, stored) if b["bin"] == "all" else {}
            rows.append(
                {
                    "bin": b["bin"],
                    "metric": metric,
                    "system": "system",
                    "score": b[key],
                    "lower": interval.get("ci_lower"),
                    "upper": interval.get("ci_upper"),
                    "n": b["n_segments"],
                }
            )
            rows.append(
                {
                    "bin": b["bin"],
                    "metric": metric,
                    "system": "TM",
                    "score": b[tm_key],
                    "lower": None,
                    "upper": None,
                    "n": b["n_segments"],
                }
            )
    return rows


def _bins(doc: dict[str, Any]) -> str:
    """chrF++ and BLEU per exposure bin against the TM baseline, and GenGap."""
    if not doc["exposure"]:
        return _empty(NO_AUDIT.format(test_set=doc["run"]["test_set"]))
    g = doc["gengap"] or {}
    order = {b: i for i, b in enumerate(BIN_ORDER)}
    by = binned_side(doc["exposure"].get("side"))
    rows = [
        [
            b["bin"],
            b["n_segments"],
            fmt_share(b["share"]),
            fmt(b[f"mean_{by}_exposure"], 3),
            fmt(b["chrf_plus_plus"]),
            fmt(b["tm_chrf_plus_plus"]),
            fmt(b["delta_chrf_plus_plus"]),
            fmt(b["bleu"]),
            fmt(b["tm_bleu"]),
            fmt(b["delta_bleu"]),
        ]
        for b in sorted(doc["bins"], key=lambda b: order.get(b["bin"], 99))
    ]
    columns = ["bin", "n", "share", "mean exposure", "chrF++", "TM chrF++", "Δ chrF++"]
    columns += ["BLEU", "TM BLEU", "Δ BLEU"]
    gengap = fields(
        [
            ("GenGap chrF++ (near - far)", fmt(g.get("gengap_chrf"))),
            ("GenGap BLEU (near - far)", fmt(g.get("gengap_bleu"))),
            ("TM GenGap chrF++", fmt(g.get("tm_gengap_chrf"))),
            ("TM GenGap BLEU", fmt(g.get("tm_gengap_bleu"))),
        ]
    )
    return (
        '<p class="note">Whiskers: the bootstrap interval stored at ingest (whole run; bins '
        "have no stored intervals).</p>"
        + chart_block("chart-bins", "bins", {"bins": bin_chart_rows(doc)})
        + f'<div class="row">{table(columns, rows, numeric=tuple(range(1, 10)))}{gengap}</div>'
    )


def _composite(doc: dict[str, Any]) -> str:
    """The composite, its interval and tier, and its inputs with effective weights."""
    c = doc["composite"]
    interval = _interval_of(doc, "composite")
    tier = c["quality_tier"] or "unscored"
    value = fmt_interval(c["composite"], interval.get("ci_lower"), interval.get("ci_upper"), 4)
    head = (
        f"<p>composite <b>{esc(value)}</b> (profile {esc(c['profile'])}) &rarr; "
        f'<span class="tier tier-{esc(tier)}">{esc(tier)}</span> '
        '<span class="note">(provisional label)</span></p>'
    )
    if not c["inputs"]:
        return head + _empty("no composite inputs: none of the profile's metrics is present")
    inputs = [
        {
            "metric": label(i["metric"]),
            "value": i["value"],
            "weight": i["weight"],
            "effective_weight": i["effective_weight"],
        }
        for i in c["inputs"]
    ]
    overall = [
        {
            "composite": c["composite"],
            "lower": interval.get("ci_lower"),
            "upper": interval.get("ci_upper"),
            "tier": tier,
        }
    ]
    rows = [
        [label(i["metric"]), fmt(i["value"], 4), fmt(i["weight"]), fmt(i["effective_weight"], 4)]
        for i in c["inputs"]
    ]
    missing = (
        f'<p class="note">not available: {esc(", ".join(c["missing"]))}</p>' if c["missing"] else ""
    )
    return (
        head
        + chart_block("chart-composite", "composite", {"inputs": inputs, "overall": overall})
        + table(["metric", "value (0-1)", "weight", "effective weight"], rows, numeric=(1, 2, 3))
        + missing
    )


def _intervals(doc: dict[str, Any]) -> str:
    """Every stored bootstrap interval, as whiskers and as a table."""
    if not doc["intervals"]:
        return _empty("no bootstrap intervals stored (the run was ingested with --no-intervals)")
    first = doc["intervals"][0]
    rows = [
        {
            "row": f"{label(i['metric'])} · {i['scope']}",
            "scale": "percent" if on_percent_scale(i["metric"]) else "unit",
            "metric": label(i["metric"]),
            "scope": i["scope"],
            "estimate": i["estimate"],
            "lower": i["ci_lower"],
            "upper": i["ci_upper"],
            "n": i["n"],
        }
        for i in doc["intervals"]
    ]
    digits = {i["metric"]: score_digits(i["metric"]) for i in doc["intervals"]}
    level = f"{1 - first['alpha']:.0%}"
    return (
        f'<p class="note">{esc(first["n_bootstrap"])} resamples, '
        f"{esc(level)} percentile intervals, seed {esc(first['seed'])}.</p>"
        + chart_block("chart-intervals", "intervals", {"intervals": rows})
        + table(
            ["metric", "scope", "estimate", "lower", "upper", "n"],
            [
                [
                    label(i["metric"]),
                    i["scope"],
                    fmt(i["estimate"], digits[i["metric"]]),
                    fmt(i["ci_lower"], digits[i["metric"]]),
                    fmt(i["ci_upper"], digits[i["metric"]]),
                    i["n"],
                ]
                for i in doc["intervals"]
            ],
            numeric=(2, 3, 4, 5),
        )
    )


def _cost_and_speed(doc: dict[str, Any]) -> str:
    """Tokens, cost, the cost-adjusted score, latency and throughput."""
    cost, speed = doc["cost"], doc["speed"]
    latency = " / ".join(
        fmt(speed.get(k), 3)
        for k in ("avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds")
    )
    return fields(
        [
            ("total tokens", fmt(cost.get("total_tokens"))),
            ("total cost (USD)", fmt(cost.get("total_cost_usd"), 4)),
            ("cost per entry (USD)", fmt(cost.get("cost_per_entry_usd"), 6)),
            ("cost per 1k tokens (USD)", fmt(cost.get("cost_per_1k_tokens"), 6)),
            ("cost-adjusted score", fmt(cost.get("cost_adjusted"), 4)),
            ("elapsed (s)", fmt(speed.get("elapsed_seconds"))),
            ("latency avg / median / p95 (s)", latency),
            ("tokens per second", fmt(speed.get("tokens_per_second"), 1)),
            ("entries per minute", fmt(speed.get("entries_per_minute"), 1)),
        ]
    )


def _breakdowns(doc: dict[str, Any]) -> str:
    """Scores by difficulty tier and by provenance; whiskers from the stored tier intervals."""
    if not doc["breakdowns"]:
        return _empty("no breakdowns: the test set has no difficulty or provenance")
    rows = []
    for b in doc["breakdowns"]:
        value = "unknown" if b["value"] is None else b["value"]
        interval = (
            _interval_of(doc, "chrf_plus_plus", f"difficulty={b['value']}")
            if b["dimension"] == "difficulty"
            else {}
        )
        rows.append(
            {
                "dimension": b["dimension"],
                "value": value,
                "n": b["n_segments"],
                "chrf": b["chrf_plus_plus"],
                "bleu": b["bleu"],
                "lower": interval.get("ci_lower"),
                "upper": interval.get("ci_upper"),
            }
        )
    return chart_block("chart-breakdowns", "breakdowns", {"breakdowns": rows}) + table(
        ["by", "value", "n", "chrF++", "BLEU", "TER", "exact match"],
        [
            [
                b["dimension"],
                "unknown" if b["value"] is None else b["value"],
                b["n_segments"],
                fmt(b["chrf_plus_plus"]),
                fmt(b["bleu"]),
                fmt(b["ter"]),
                fmt(b["exact_match_rate"], 3),
            ]
            for b in doc["breakdowns"]
        ],
        numeric=(2, 3, 4, 5, 6),
    )


def _metrics(doc: dict[str, Any]) -> str:
    """Metrics ingested from the run card or test report."""
    if not doc["metrics"]:
        return _empty("no ingested metrics")
    return table(
        ["metric", "value", "from"],
        [[label(m["metric"]), fmt(m["value"], 4), m["source"]] for m in doc["metrics"]],
        numeric=(1,),
    )


def _segments(doc: dict[str, Any], segments: SegmentData) -> str:
    """The segment table's controls and frame (the page script fills it, worst first)."""
    bins = "".join(f'<option value="{esc(b)}">{esc(b)}</option>' for b in BIN_ORDER if b != "all")
    audit = (
        ""
        if doc["exposure"]
        else '<p class="note">no audit: TM neighbours, exposure and bins are empty.</p>'
    )
    return (
        '<p class="note">Worst first (lowest sentence chrF++). Click a column to sort; the '
        "filter matches id, source, reference, hypothesis and TM text.</p>"
        + audit
        + '<div class="controls"><input type="search" id="segment-filter" '
        'placeholder="filter segments" aria-label="filter segments">'
        '<select id="segment-bin" aria-label="bin"><option value="">all bins</option>'
        f'{bins}</select><span id="segment-count" class="note"></span></div>'
        f'<table class="data" id="segments" data-shared="{esc(segments.key)}">'
        "<thead><tr></tr></thead><tbody></tbody></table>"
        "<noscript><p>The segment table needs JavaScript.</p></noscript>"
        + json_block("segments-run", raw_json=segments.run_json)
    )


def run_title(doc: dict[str, Any]) -> str:
    """`model/condition on test set`."""
    run = doc["run"]
    name = f"{run['model_slug']}/{run['condition']}" if run["condition"] else run["model_slug"]
    return f"{name} on {run['test_set']}"


def run_page(
    doc: dict[str, Any],
    *,
    histogram: list[dict[str, Any]],
    segments: SegmentData,
    assets: Assets,
    links: RunLinks,
) -> str:
    """The whole page of one run."""
    nav = ""
    if links.index:
        nav_links = [link(links.index, "dashboard")]
        if links.testset:
            nav_links.append(link(links.testset, f"test set {doc['run']['test_set']}"))
        nav = f"<nav>{''.join(nav_links)}</nav>"
    sections = [
        _section("Run", _header(doc, links), "run"),
        _section("Warnings", _warnings(doc), "warnings-section"),
        _section("Quality against the TM baseline", _quality(doc), "quality"),
        _section("Exposure", _exposure(doc, histogram), "exposure"),
        _section("Scores per exposure bin", _bins(doc), "bins"),
        _section("Composite and tier", _composite(doc), "composite"),
        _section("Bootstrap intervals", _intervals(doc), "intervals"),
        _section("Cost and speed", _cost_and_speed(doc), "cost"),
        _section("Breakdowns", _breakdowns(doc), "breakdowns"),
        _section("Ingested metrics", _metrics(doc), "metrics"),
        _section("Segments", _segments(doc, segments), "segments-section"),
    ]
    shared = (
        Script(src=segments.shared_src)
        if segments.shared_src
        else Script(text=shared_script(segments.key, segments.shared_json))
    )
    return page(
        run_title(doc),
        "\n".join(sections),
        assets=assets,
        nav=nav,
        data_scripts=(shared,),
    )
