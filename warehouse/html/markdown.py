"""GitHub-flavoured Markdown of a gate, a comparison and a leaderboard: what a CI job writes to
its summary or posts on a pull request. Every text from the warehouse (names, ids, warnings) is
escaped, so a model called `<script>` or `a|b` stays text in one table cell."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from warehouse.analysis.compare import Comparison, run_letters
from warehouse.analysis.regressions import Regression, RegressionReport
from warehouse.analysis.replicates import ReplicateGroup
from warehouse.basics import grouped
from warehouse.metrics.registry import format_score as _num
from warehouse.metrics.registry import label
from warehouse.stats.clusters import Board
from warehouse.stats.gate import GATE_RULE

ALPHA = "\N{GREEK SMALL LETTER ALPHA}"
_METHOD_TITLES = {
    "sign": "paired bootstrap sign test",
    "paired-bs": "paired bootstrap resampling (sacrebleu's paired-bs)",
    "paired-ar": "approximate randomisation (sacrebleu's paired-ar)",
}
# Characters with a meaning anywhere in a line, escaped with a backslash (<, > and & become
# entities), and those that have one at the start of a line (a heading, a list, a quote).
_MARKUP = re.compile(r"([\\`*_\[\]|~])")
_LINE_START = re.compile(r"^([#+=-]|\d+(?=[.)]))")


def escape(value: Any) -> str:
    """Text as literal Markdown inline content (empty for None)."""
    if value is None:
        return ""
    text = " ".join(str(value).split())  # no line breaks inside a cell
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKUP.sub(r"\\\1", text)
    start = _LINE_START.match(text)
    if start is None:
        return text
    if start.group(1).isdigit():  # `1.` would start an ordered list: escape its dot
        end = start.end()
        return f"{text[:end]}\\{text[end:]}"
    return "\\" + text


def _code(value: Any) -> str:
    """An id or name as inline code (backticks in it make it plain escaped text)."""
    text = " ".join(str(value).split())
    return escape(text) if "`" in text else f"`{text}`"


def table(columns: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A GFM table of cells already in Markdown (`right`: right-aligned columns)."""
    rule = ["---:" if i in right else "---" for i in range(len(columns))]
    lines = [columns, rule, *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def _interval(metric: str, lower: float | None, upper: float | None) -> str:
    """`[lo, hi]`, or n/a."""
    if lower is None or upper is None:
        return "n/a"
    return f"[{_num(metric, lower)}, {_num(metric, upper)}]"


def _settings_line(method: str, n: int, alpha: float, seed: int) -> str:
    """The test and its settings, in one line."""
    return f"{_METHOD_TITLES.get(method, method)} · n = {n:,} · {ALPHA} = {alpha:g} · seed = {seed}"


def _verdict(found: Regression) -> str:
    """What a gate concludes about one metric (A is the run, B the baseline)."""
    r = found.result
    if r.winner == "B":
        return "**regressed**"
    if r.winner == "A":
        return "improved"
    if r.below_mde and r.mde is not None:
        return f"below what the test set can detect (MDE {_num(r.metric_name, r.mde)})"
    return "no significant change"


def _warnings(warnings: Sequence[str]) -> list[str]:
    """The warnings as a list under a heading (none: nothing)."""
    if not warnings:
        return []
    return ["", "**Warnings**", "", *(f"- {escape(w)}" for w in warnings)]


def regressions_markdown(report: RegressionReport) -> str:
    """A gate's verdict with every metric's scores, Δ, interval and p-value; or, for a scan of
    many runs, its significant drops."""
    s = report.settings
    settings = _settings_line(report.method, s.n_bootstrap, s.alpha, s.seed)
    if report.gated_run is not None:
        return _gate_markdown(report, settings)
    lines = ["## tame-wh regressions", "", settings, ""]
    if report.nothing_checked:
        lines.append(f"No comparison: {escape(report.nothing_checked)}.")
    elif not report.regressions:
        lines.append(f"No significant regressions in {len(report.checked)} comparisons.")
    else:
        lines.append(
            table(
                [
                    *("model", "condition", "test set", "run", "previous", "metric"),
                    *("before", "now", "Δ", "p-value"),
                ],
                [
                    [
                        escape(r.step.model_slug),
                        escape(r.step.condition),
                        escape(r.step.test_set),
                        _code(r.step.run_id),
                        _code(r.step.previous_run_id),
                        escape(label(r.result.metric_name)),
                        *_before_after(r),
                        f"{r.result.p_value:.4f}",
                    ]
                    for r in report.regressions
                ],
                right=range(6, 10),
            )
        )
    return _closing(lines, report)


def _closing(lines: list[str], report: RegressionReport) -> str:
    """The document: `lines`, the note on undetectable drops and the warnings."""
    if report.undetectable:
        lines += ["", _undetectable_note(len(report.undetectable))]
    if report.within_seed_noise:
        lines += [
            "",
            f"> {len(report.within_seed_noise)} significant drop(s) lie within the seed noise of "
            "the baseline's replicates: not regressions.",
        ]
    return "\n".join(lines + _warnings(report.warnings)) + "\n"


def _before_after(found: Regression) -> list[str]:
    """The baseline's score, the run's and their difference."""
    r = found.result
    return [
        _num(r.metric_name, r.system_b_score),
        _num(r.metric_name, r.system_a_score),
        _num(r.metric_name, r.delta),
    ]


def _undetectable_note(n: int) -> str:
    """The note on drops below the minimum detectable difference."""
    return (
        f"> {n} drop(s) were not significant and smaller than the minimum detectable "
        "difference: this test set cannot tell differences this small apart."
    )


def _gate_markdown(report: RegressionReport, settings: str) -> str:
    """The gate of one run against its baseline."""
    baseline = report.baseline
    assert baseline is not None and report.gated_run is not None
    verdict = "❌ regressed" if report.regressions else "✅ passed"
    lines = [f"## tame-wh gate: {verdict}", ""]
    if not report.checked:
        lines.append(
            f"Run {_code(report.gated_run)} has no baseline (`--against "
            f"{escape(baseline.rule)}`): {escape(baseline.missing)}. Nothing to compare with; "
            "the gate passes."
        )
        return "\n".join(lines + _warnings(report.warnings)) + "\n"
    step = report.checked[0]
    condition = f", condition {escape(step.condition)}" if step.condition else ""
    lines += [
        f"Run {_code(step.run_id)} (model {escape(step.model_slug)}{condition}) on test set "
        f"{escape(step.test_set)} against baseline {_code(step.previous_run_id)} "
        f"(`--against {escape(baseline.rule)}`).",
        "",
        settings,
        "",
    ]
    gate = report.verdict
    if gate is None:  # a report from before the gate had a policy
        return _closing(lines, report)
    noise = {r.result.metric_name for r in report.within_seed_noise}
    policy = gate.policy
    lines[-2] = (
        f"One-sided paired bootstrap · gated: {escape(', '.join(label(m) for m in policy.metrics))}"
        f" · {escape(policy.correction)} correction · {ALPHA} = {policy.alpha:g} · "
        f"n = {gate.n_bootstrap:,} · seed = {gate.seed}"
    )
    lines.append(
        table(
            [
                "gated metric",
                "baseline",
                "run",
                "Δ",
                "margin",
                "one-sided interval",
                "level",
                "p (adjusted)",
                "outcome",
            ],
            [
                [
                    escape(label(m.metric_name)),
                    _num(m.metric_name, m.baseline_score),
                    _num(m.metric_name, m.candidate_score),
                    _num(m.metric_name, m.delta),
                    _num(m.metric_name, m.margin),
                    escape(m.bound_text()),
                    f"{m.level:.4g}",
                    f"{m.p_value:.4f} ({m.adjusted_p:.4f})",
                    "holds: within the seed noise of the baseline's replicates"
                    if m.metric_name in noise
                    else (
                        "**fails**: the drop is beyond the margin"
                        if m.failed
                        else escape(m.outcome)
                    ),
                ]
                for m in gate.metrics
            ],
            right=range(1, 8),
        )
    )
    lines += ["", f"Rule: {escape(GATE_RULE)}."]
    gated = set(policy.metrics)
    info = [r for r in report.tested if r.result.metric_name not in gated]
    if info:
        level = f"{1 - report.settings.alpha:.0%}"
        lines += [
            "",
            "Not gated (information only: raw per-metric p-values, never failing the job):",
            "",
            table(
                ["metric", "baseline", "run", "Δ", f"{level} CI of Δ", "p-value", "change"],
                [
                    [
                        escape(label(r.result.metric_name)),
                        *_before_after(r),
                        _interval(r.result.metric_name, r.result.ci_lower, r.result.ci_upper),
                        f"{r.result.p_value:.4f}",
                        _verdict(r).replace("**regressed**", "dropped"),
                    ]
                    for r in info
                ],
                right=range(1, 6),
            ),
        ]
    return _closing(lines, report)


def comparison_markdown(comparison: Comparison) -> str:
    """Runs side by side and, when tested, each pair's Δ, interval, p-value and winner."""
    letters = run_letters(len(comparison.runs))
    lines = ["## tame-wh compare", ""]
    lines += [
        f"- **{x}** = {escape(run.label)}" for x, run in zip(letters, comparison.runs, strict=True)
    ]
    first = letters[0]
    lines += [
        "",
        f"On {comparison.n_segments:,} common segments.",
        "",
        table(
            ["metric", *letters, *(f"Δ {first}-{x}" for x in letters[1:])],
            [
                [
                    escape(label(row.metric)),
                    *(_num(row.metric, v) for v in row.values),
                    *(_num(row.metric, d) for d in row.deltas),
                ]
                for row in comparison.rows
            ],
            right=range(1, 2 * len(letters)),
        ),
    ]
    if comparison.pairs:
        s = comparison.settings
        assert s is not None and comparison.method is not None
        pairs = [(x, y) for i, x in enumerate(letters) for y in letters[i + 1 :]]
        for pair, (a, b) in zip(comparison.pairs, pairs, strict=True):
            lines += [
                "",
                f"### {a} vs {b}",
                "",
                _settings_line(comparison.method, s.n_bootstrap, s.alpha, s.seed)
                + f" · {pair.n_segments:,} segments",
                "",
                table(
                    [
                        *("metric", a, b, "Δ"),
                        *(f"{s.confidence_level:.0%} CI of Δ", "p-value", "better"),
                    ],
                    [
                        [
                            escape(label(r.metric_name)),
                            _num(r.metric_name, r.system_a_score),
                            _num(r.metric_name, r.system_b_score),
                            _num(r.metric_name, r.delta),
                            _interval(r.metric_name, r.ci_lower, r.ci_upper),
                            f"{r.p_value:.4f}",
                            {"A": f"**{a}**", "B": f"**{b}**"}.get(r.winner or "", "—"),
                        ]
                        for r in pair.results
                    ],
                    right=range(1, 6),
                ),
            ]
            below = [r for r in pair.results if r.below_mde and r.mde is not None]
            lines += [
                f"\n> {escape(label(r.metric_name))}: |Δ| = {_num(r.metric_name, abs(r.delta))} "
                f"is below the minimum detectable difference {_num(r.metric_name, r.mde)}: this "
                "test set cannot tell differences this small apart."
                for r in below
            ]
    warnings = comparison.warnings + [
        f"{p.run_a} vs {p.run_b}: {w}" for p in comparison.pairs for w in p.warnings
    ]
    return "\n".join(lines + _warnings(warnings)) + "\n"


def _ranks(row: dict[str, Any]) -> str:
    """A rank range: `3` or `2-5` (empty without one)."""
    best, worst = row.get("rank_range") or (None, None)
    if best is None:
        return ""
    return str(best) if best == worst else f"{best}-{worst}"


def _with_ci(value: Any, lower: Any, upper: Any, digits: int = 2) -> str:
    """A score with its interval when the run has one."""
    if value is None:
        return "n/a"
    if lower is None or upper is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{lower:.{digits}f}, {upper:.{digits}f}]"


def _other(row: dict[str, Any], metric: str) -> str:
    """` ≠` after a score computed under other settings than its test set's other runs."""
    return " ≠" if metric in row.get("signature_differs", ()) else ""


def _fixed(value: Any, digits: int = 2) -> str:
    """A number with `digits` decimals, or empty."""
    return "" if value is None else f"{value:.{digits}f}"


def _bin_pair(found: dict[str, Any] | None, key: str, ci: str) -> str:
    """A bin score with its interval."""
    if found is None:
        return "n/a"
    pair = found.get(ci) or (None, None)
    return _with_ci(found.get(key), pair[0], pair[1])


def _bin_markdown(rows: Sequence[dict[str, Any]], bin_name: str) -> str:
    """The runs ranked by chrF++ on one exposure bin, one table per test set."""
    lines = [f"## tame-wh leaderboard, bin {escape(bin_name)}"]
    if not rows:
        lines += ["", "No runs yet."]
    for test_set, runs in grouped(rows, lambda r: r["test_set"]).items():
        lines += [
            "",
            f"### Test set {escape(test_set)} ({len(runs)} run{'s' if len(runs) != 1 else ''})",
            "",
            table(
                ["#", "run", "model", "condition", "segments", "chrF++ [CI]", "BLEU [CI]",
                 "Δ TM chrF++ [CI]", "GenGap chrF++ [CI]", "train"],
                [[str(i + 1), _code(r["run_id"]), escape(r["model_slug"]), escape(r["condition"]),
                  "" if r["bin"] is None else str(r["bin"]["n_segments"]),
                  _bin_pair(r["bin"], "chrf_plus_plus", "chrf_ci"),
                  _bin_pair(r["bin"], "bleu", "bleu_ci"),
                  _bin_pair(r["bin"], "delta_tm_chrf_plus_plus", "delta_tm_chrf_ci"),
                  _bin_pair(r["bin"], "gengap_chrf", "gengap_chrf_ci"),
                  escape(r["train_corpus"] or "no audit")] for i, r in enumerate(runs)],
                right=(0, 4, 5, 6, 7, 8),
            ),
        ]  # fmt: skip
    lines += ["", "Intervals: percentile bootstrap, segments resampled within their bin."]
    return "\n".join(lines) + "\n"


# Human score columns: (header, leaderboard column, digits), shown when a run has one.
_HUMAN = (("MQM", "human_mqm", 3), ("ESA", "human_esa", 2), ("DA z", "human_da_z", 3))


def leaderboard_markdown(
    rows: Sequence[dict[str, Any]], boards: Sequence[Board] = (), *, bin_name: str | None = None
) -> str:
    """One ranked table per test set (leaderboard rows in their order), with each run's cluster
    and rank range when the rows carry them; with `bin_name`, the scores on that exposure bin."""
    if bin_name is not None:
        return _bin_markdown(rows, bin_name)
    by_test_set = grouped(rows, lambda r: r["test_set"])
    clustered = any("cluster" in r for r in rows)
    lines = ["## tame-wh leaderboard"]
    if not rows:
        lines += ["", "No runs yet."]
    for test_set, runs in by_test_set.items():
        human = [h for h in _HUMAN if any(r.get(h[1]) is not None for r in runs)]
        plugins = list(runs[0].get("plugin_metrics") or {})  # `leaderboard --metric NAME`
        first_plugin = 11 + 2 * clustered + len(human)
        lines += [
            "",
            f"### Test set {escape(test_set)} ({len(runs)} run{'s' if len(runs) != 1 else ''})",
            "",
            table(
                ["#", "run", "model", "condition", "chrF++ [CI]", "BLEU", "TER", "composite"]
                + ["tier", "Δ TM BLEU", "GenGap BLEU"]
                + (["cluster", "ranks"] if clustered else [])
                + [f"{h[0]} [CI]" for h in human]
                + [escape(p) for p in plugins],
                [
                    [
                        str(i + 1),
                        _code(r["run_id"]),
                        escape(r["model_slug"]),
                        escape(r["condition"]),
                        _with_ci(r["chrf_plus_plus"], r["chrf_ci_lower"], r["chrf_ci_upper"])
                        + _other(r, "chrf"),
                        _fixed(r["corpus_bleu"]) + _other(r, "bleu"),
                        _fixed(r["ter"]) + _other(r, "ter"),
                        _fixed(r["composite_score"], 4) + (" ≠" if r["coverage_differs"] else ""),
                        escape(r["quality_tier"]),
                        _fixed(r["delta_tm_bleu"]),
                        _fixed(r["gengap_bleu"]),
                        *([escape(r["cluster"]), _ranks(r)] if clustered else []),
                        *(
                            _with_ci(r[c], r.get(f"{c}_ci_lower"), r.get(f"{c}_ci_upper"), d)
                            for _h, c, d in human
                        ),
                        *(_fixed(r["plugin_metrics"][p], 4) + _other(r, p) for p in plugins),
                    ]
                    for i, r in enumerate(runs)
                ],
                right=(
                    0,
                    4,
                    5,
                    6,
                    7,
                    9,
                    10,
                    11,
                    12,
                    *range(11 + 2 * clustered, first_plugin + len(plugins)),
                ),
            ),
        ]
    notes = [
        f"≠ {_code(r['run_id'])}: {metric} computed as "
        f"{_code(r['metric_signatures'][metric])}, unlike most runs of its test set; not "
        "comparable."
        for r in rows
        for metric in r.get("signature_differs", ())
    ]
    if any(r["coverage_differs"] for r in rows):
        notes.append("≠: the composite uses a different set of metrics; not comparable.")
    if boards:
        b = boards[0]
        notes.append(
            f"cluster: a run significantly beats every run of a later cluster on "
            f"{escape(label(b.metric))}; ranks: its best and worst possible rank "
            f"({escape(b.method)}, {escape(b.correction)} correction, "
            f"{ALPHA} = {b.settings.alpha:g}, seed = {b.settings.seed}, "
            f"n = {b.settings.n_bootstrap:,})."
        )
        notes += [escape(note) for board in boards for note in board.notes]
    if notes:
        lines += ["", *(f"> {note}" for note in notes)]
    return "\n".join(lines) + "\n"


def _replicate_cell(group: ReplicateGroup, metric: str, digits: int) -> str:
    """Mean ± standard deviation [interval] of one metric over a group's replicates."""
    score = group.scores.get(metric)
    return score.text(digits) if score is not None else "n/a"


def _placed(found: dict[str, Any] | None) -> list[str]:
    """A group's cluster and rank range (empty when alone on its test set)."""
    return ["", ""] if found is None else [str(found["cluster"]), _ranks(found)]


def replicates_markdown(
    groups: Sequence[ReplicateGroup], placed: dict[str, dict[str, Any]] | None = None
) -> str:
    """One table of replicate groups per test set: mean ± sd [segment-and-seed interval], and
    each group's cluster and rank range when `placed` (by first run) holds them."""
    placed = placed or {}
    lines = ["## tame-wh leaderboard (replicate groups)"]
    if not groups:
        lines += ["", "No runs yet."]
    by_test_set = grouped(groups, lambda g: g.test_set)
    for test_set, members in by_test_set.items():
        lines += [
            "",
            f"### Test set {escape(test_set)}",
            "",
            table(
                ["#", "model", "condition", "replicate", "n", "chrF++", "BLEU", "runs"]
                + (["cluster", "ranks"] if placed else []),
                [
                    [
                        str(i + 1),
                        escape(g.model_slug),
                        escape(g.condition),
                        escape(g.label),
                        str(len(g.run_ids)),
                        _replicate_cell(g, "chrf_plus_plus", 2),
                        _replicate_cell(g, "bleu", 2),
                        ", ".join(_code(r) for r in g.run_ids),
                        *(_placed(placed.get(g.run_ids[0])) if placed else []),
                    ]
                    for i, g in enumerate(members)
                ],
                right=(0, 4, 5, 6),
            ),
        ]
    if groups:
        s = groups[0].settings
        lines += [
            "",
            f"> mean ± standard deviation across replicates [interval counting segment and seed "
            f"noise; n = {s.n_bootstrap:,}, {ALPHA} = {s.alpha:g}, seed = {s.seed}].",
        ]
    return "\n".join(lines) + "\n"
