"""Chart specifications (Vega-Lite, built with altair) for the report and dashboard pages.

Each chart is built once as a template whose marks read named datasets; a page's chart is the
template plus its rows under the top-level `datasets` key. Building and validating an altair
chart takes milliseconds, so a dashboard of a thousand runs only pays for it once per kind.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import altair as alt

from warehouse.exposure.config import EXPOSURE_BINS
from warehouse.html.markup import esc, json_block, to_json

BIN_ORDER = ["all", *EXPOSURE_BINS]
SIDE_ORDER = ["source", "target", "pair"]
TIER_ORDER = ["fluent", "deployable", "functional", "emerging", "baseline", "unscored"]
_TIER_COLORS = ["#1a7f37", "#4c9a2a", "#bf8700", "#d4600f", "#cf222e", "#8c959f"]
_SYSTEM_COLORS = alt.Scale(domain=["system", "TM"], range=["#0969da", "#afb8c1"])
_WIDTH = 300


def _exposure() -> alt.FacetChart:
    """Histograms of source, target and pair exposure, with the bin thresholds as rules."""
    data = alt.NamedData(name="exposure")
    bars = (
        alt.Chart()
        .mark_bar(color="#0969da", opacity=0.8)
        .encode(
            x=alt.X("lo:Q", title="exposure", scale=alt.Scale(domain=[0, 1])),
            x2="hi:Q",
            y=alt.Y("n:Q", title="segments", scale=alt.Scale(zero=True)),
            y2=alt.datum(0),
            tooltip=["side:N", "lo:Q", "hi:Q", "n:Q"],
        )
        .transform_filter(alt.datum.kind == "bin")
    )
    rules = (
        alt.Chart()
        .mark_rule(color="#cf222e", strokeDash=[4, 3], strokeWidth=1.5)
        .encode(x="value:Q", tooltip=["label:N", "value:Q"])
        .transform_filter(alt.datum.kind == "threshold")
    )
    labels = (
        alt.Chart()
        .mark_text(align="left", dx=3, dy=-4, baseline="top", color="#cf222e", fontSize=10)
        .encode(x="value:Q", y=alt.value(0), text="label:N")
        .transform_filter(alt.datum.kind == "threshold")
    )
    return (
        alt.layer(bars, rules, labels, data=data)
        .properties(width=_WIDTH, height=140)
        .facet(column=alt.Column("side:N", sort=SIDE_ORDER, title=None))
    )


def _bins() -> alt.FacetChart:
    """chrF++ and BLEU per exposure bin, system against the TM baseline; whiskers where a
    bootstrap interval is stored."""
    base = alt.Chart().encode(
        x=alt.X("bin:N", sort=BIN_ORDER, title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("system:N", sort=["system", "TM"]),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("score:Q", title="score", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("system:N", scale=_SYSTEM_COLORS, title=None),
        tooltip=["metric:N", "bin:N", "system:N", "score:Q", "n:Q", "lower:Q", "upper:Q"],
    )
    # Rows without an interval have null bounds, which Vega-Lite leaves undrawn.
    whiskers = base.mark_rule(color="#24292f", strokeWidth=1.5).encode(y="lower:Q", y2="upper:Q")
    return (
        alt.layer(bars, whiskers, data=alt.NamedData(name="bins"))
        .properties(width=_WIDTH, height=180)
        .facet(column=alt.Column("metric:N", sort=["chrF++", "BLEU"], title=None))
    )


def _composite() -> alt.LayerChart:
    """The composite's inputs (0-1) with their effective weights, the composite and its
    interval, and the tier thresholds."""
    scale = alt.Scale(domain=[0, 1])
    bars = (
        alt.Chart(alt.NamedData(name="inputs"))
        .mark_bar(color="#0969da")
        .encode(
            x=alt.X("value:Q", scale=scale, title="value (0-1, higher is better)"),
            y=alt.Y("metric:N", sort="-x", title=None),
            opacity=alt.Opacity("effective_weight:Q", title="effective weight", legend=None),
            tooltip=["metric:N", "value:Q", "weight:Q", "effective_weight:Q"],
        )
    )
    band = (
        alt.Chart(alt.NamedData(name="overall"))
        .mark_rect(color="#bf8700", opacity=0.25)
        .encode(x="lower:Q", x2="upper:Q")
        .transform_filter("isValid(datum.lower) && isValid(datum.upper)")
    )
    line = (
        alt.Chart(alt.NamedData(name="overall"))
        .mark_rule(color="#bf8700", strokeWidth=2)
        .encode(x="composite:Q", tooltip=["composite:Q", "lower:Q", "upper:Q", "tier:N"])
    )
    return alt.layer(band, bars, line).properties(width=420, height=alt.Step(22))


def _intervals() -> alt.HConcatChart:
    """Every stored bootstrap interval: the estimate with its whisker, one panel for scores on
    the 0-100 scale and one for rates and the composite (0-1)."""
    panels = []
    for scale, title in (("percent", "0-100 scores"), ("unit", "0-1 rates and composite")):
        base = alt.Chart().encode(y=alt.Y("row:N", title=None, sort=None))
        whisker = base.mark_rule(color="#24292f", strokeWidth=1.5).encode(
            x=alt.X("lower:Q", title=None, scale=alt.Scale(zero=False)), x2="upper:Q"
        )
        point = base.mark_point(filled=True, color="#0969da", size=50).encode(
            x="estimate:Q",
            tooltip=["metric:N", "scope:N", "estimate:Q", "lower:Q", "upper:Q", "n:Q"],
        )
        panels.append(
            alt.layer(whisker, point, data=alt.NamedData(name="intervals"))
            .transform_filter(alt.datum.scale == scale)
            .properties(width=280, height=alt.Step(16), title=title)
        )
    return alt.hconcat(*panels)


def _breakdowns() -> alt.HConcatChart:
    """chrF++ by difficulty tier and by provenance, with whiskers where stored."""
    panels = []
    for dimension in ("difficulty", "provenance"):
        base = alt.Chart().encode(y=alt.Y("value:N", title=None))
        bars = base.mark_bar(color="#0969da").encode(
            x=alt.X("chrf:Q", title="chrF++", scale=alt.Scale(domain=[0, 100])),
            tooltip=["dimension:N", "value:N", "n:Q", "chrf:Q", "bleu:Q", "lower:Q", "upper:Q"],
        )
        # Rows without an interval have null bounds, which Vega-Lite leaves undrawn.
        whiskers = base.mark_rule(color="#24292f", strokeWidth=1.5).encode(
            x="lower:Q", x2="upper:Q"
        )
        panels.append(
            alt.layer(bars, whiskers, data=alt.NamedData(name="breakdowns"))
            .transform_filter(alt.datum.dimension == dimension)
            .properties(width=_WIDTH, height=alt.Step(20), title=dimension)
        )
    return alt.hconcat(*panels)


def _board() -> alt.LayerChart:
    """Composite per run with its interval as a whisker, coloured by tier, best first."""
    base = alt.Chart(alt.NamedData(name="board")).encode(
        y=alt.Y("label:N", sort=alt.EncodingSortField("rank", order="ascending"), title=None)
    )
    whisker = base.mark_rule(color="#24292f", strokeWidth=1.5).encode(
        x=alt.X("lower:Q", title="composite", scale=alt.Scale(domain=[0, 1])), x2="upper:Q"
    )
    point = base.mark_point(filled=True, size=70).encode(
        x="composite:Q",
        color=alt.Color(
            "tier:N", scale=alt.Scale(domain=TIER_ORDER, range=_TIER_COLORS), title="tier"
        ),
        tooltip=["label:N", "composite:Q", "lower:Q", "upper:Q", "tier:N"],
    )
    return alt.layer(whisker, point).properties(width=420, height=alt.Step(18))


def _deltas() -> alt.FacetChart:
    """Per-bin differences (first run minus second) of chrF++ and BLEU."""
    return (
        alt.Chart(alt.NamedData(name="deltas"))
        .mark_bar()
        .encode(
            x=alt.X("bin:N", sort=BIN_ORDER, title=None, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("delta:Q", title="A - B"),
            color=alt.condition(alt.datum.delta >= 0, alt.value("#1a7f37"), alt.value("#cf222e")),
            tooltip=["metric:N", "bin:N", "a:Q", "b:Q", "delta:Q", "n:Q"],
        )
        .properties(width=_WIDTH, height=160)
        .facet(column=alt.Column("metric:N", sort=["chrF++", "BLEU"], title=None))
    )


def _trend() -> alt.FacetChart:
    """A model's scores over time: per series (test set and condition) a line through its runs,
    a band for each run's stored interval, and regressed runs marked."""
    base = alt.Chart().encode(
        x=alt.X("created:T", title="created"),
        color=alt.Color("series:N", title="test set / condition"),
    )
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("lower:Q", title=None), y2="upper:Q")
    line = base.mark_line(point=True).encode(
        y=alt.Y("score:Q", title="score", scale=alt.Scale(zero=False)),
        tooltip=["run:N", "series:N", "created:T", "score:Q", "lower:Q", "upper:Q"],
    )
    # Every run drawn, only the regressed ones visible: a filtered (possibly empty) layer would
    # make Vega warn about an infinite extent.
    marked = (
        alt.Chart()
        .mark_point(shape="triangle-down", size=140, filled=True, color="#cf222e")
        .encode(
            x="created:T",
            y="score:Q",
            opacity=alt.condition(alt.datum.regressed, alt.value(1.0), alt.value(0.0)),
        )
    )
    return (
        alt.layer(band, line, marked, data=alt.NamedData(name="trend"))
        .properties(width=520, height=170)
        .facet(row=alt.Row("metric:N", title=None, sort=["chrF++", "BLEU", "composite"]))
        .resolve_scale(y="independent")
    )


def _agreement() -> alt.FacetChart:
    """Each system's metric score against its human score, one panel per metric."""
    return (
        alt.Chart(alt.NamedData(name="agreement"))
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("metric_score:Q", title="metric (corpus score)", scale=alt.Scale(zero=False)),
            y=alt.Y("human:Q", title="human score (higher is better)", scale=alt.Scale(zero=False)),
            tooltip=["system:N", "metric:N", "metric_score:Q", "human:Q"],
        )
        .properties(width=220, height=200)
        .facet(column=alt.Column("metric:N", title=None))
        .resolve_scale(x="independent")
    )


_BUILDERS: dict[str, Callable[[], alt.TopLevelMixin]] = {
    "exposure": _exposure,
    "bins": _bins,
    "composite": _composite,
    "intervals": _intervals,
    "breakdowns": _breakdowns,
    "board": _board,
    "deltas": _deltas,
    "agreement": _agreement,
    "trend": _trend,
}
CHART_KINDS = tuple(_BUILDERS)


@cache
def _template(kind: str) -> dict[str, Any]:
    """The validated Vega-Lite dictionary of one chart kind (built once per process)."""
    spec = _BUILDERS[kind]().to_dict()
    spec.pop("$schema", None)  # a URL; nothing is fetched, but pages name no address at all
    spec.setdefault("config", {}).update(
        {"font": "system-ui, sans-serif", "view": {"stroke": "#d0d7de"}}
    )
    return spec


@cache
def _template_json(kind: str) -> str:
    """The template as JSON text, without its closing brace (datasets are appended)."""
    text = to_json(_template(kind))
    assert text.endswith("}") and len(text) > 2
    return text[:-1]


def chart_spec(kind: str, datasets: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The chart `kind` filled with its named datasets."""
    return {**_template(kind), "datasets": datasets}


def chart_json(kind: str, datasets: dict[str, list[dict[str, Any]]]) -> str:
    """`chart_spec` as JSON text (the template is encoded once; only the rows per call)."""
    return f'{_template_json(kind)},"datasets":{to_json(datasets)}}}'


def chart_block(chart_id: str, kind: str, datasets: dict[str, list[dict[str, Any]]]) -> str:
    """A chart's placeholder element and its specification, which the page script draws."""
    return (
        f'<div class="chart" id="{esc(chart_id)}" data-chart="{esc(chart_id)}-spec"></div>'
        + json_block(f"{chart_id}-spec", raw_json=chart_json(kind, datasets))
    )
