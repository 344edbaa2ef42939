"""The metric vocabulary: every score the warehouse names, with its label, direction, scale and
leaderboard column, in one place (docs/metrics.md, docs/scores.md).

`name` is the key used by statistics, JSON documents and `metric_values`; `column` is the column of
the `leaderboard` view and of the Supabase `run_cards` table that carries it (None when it has
none); `sort_key` is the name `tame-wh leaderboard --sort` accepts. Per-entry metrics that are not
listed here are ingested under their own names; their direction follows `higher_is_better`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One named score."""

    name: str
    label: str
    higher_is_better: bool = True
    scale: float = 1.0  # 100 for corpus scores in percent, 1 for rates and means
    column: str | None = None
    sort_key: str | None = None
    computed: bool = False  # computed by the warehouse (a run card's claimed value is not used)
    synced: bool = True  # with a column: sent to Supabase's run_cards under that column
    aliases: tuple[str, ...] = ()  # per-entry metric names that carry it in test reports
    digits: int | None = None  # decimals shown to people (default: 2 on the 0-100 scale, else 3)

    @property
    def shown_digits(self) -> int:
        """Decimals in every table, Markdown and HTML page (JSON keeps full precision)."""
        if self.digits is not None:
            return self.digits
        return 2 if self.scale == 100 else 3


# Surface metrics every run has (computed from text and stored statistics).
CHRF = "chrf_plus_plus"
CHRF_ONLY = "chrf"  # chrF (sacrebleu's word_order=0), not a leaderboard sort key
BLEU = "bleu"
TER = "ter"
EXACT_MATCH = "exact_match_rate"
LENGTH_RATIO = "length_ratio"
COMPOSITE = "composite"
# Human scores by scheme (docs/human.md): each run's newest judgment set of the scheme.
HUMAN_METRICS = {"mqm": "human_mqm", "esa": "human_esa", "da": "human_da_z"}

METRICS: tuple[Metric, ...] = (
    Metric(
        COMPOSITE,
        "composite",
        column="composite_score",
        sort_key="composite",
        computed=True,
        digits=4,
    ),
    Metric(CHRF, "chrF++", scale=100, column="chrf_plus_plus", sort_key="chrf", computed=True),
    Metric(BLEU, "BLEU", scale=100, column="corpus_bleu", sort_key="bleu", computed=True),
    Metric(TER, "TER", False, scale=100, column="ter", sort_key="ter", computed=True),
    Metric(
        EXACT_MATCH,
        "exact match",
        column="exact_match_rate",
        sort_key="exact_match",
        computed=True,
    ),
    Metric(LENGTH_RATIO, "length ratio", column="length_ratio", computed=True),
    # chrF without word n-grams, from the stored chrF++ statistics (`tame-wh meta`).
    Metric(CHRF_ONLY, "chrF", scale=100),
    # Ingested per entry or per run (docs/inputs.md); absent means NULL, never 0.
    Metric(
        "fst_acceptance_rate",
        "FST acceptance",
        column="fst_acceptance_rate",
        aliases=("fst_acceptance_rate", "fst_acceptance", "fst_accepted"),
    ),
    Metric(
        "comet_score", "COMET", column="comet_score", aliases=("comet_score", "comet"), digits=4
    ),
    Metric("equivalent_match_rate", "equivalent match", column="equivalent_match_rate"),
    Metric("semantic_score", "semantic score", column="semantic_score", digits=4),
    Metric("code_switching_rate", "code switching", False, column="code_switching_rate"),
    Metric("hallucination_rate", "hallucination", False, column="hallucination_rate"),
    Metric("terminology_adherence", "terminology", column="terminology_adherence"),
    Metric("morphological_accuracy", "morphology"),
    Metric("orthographic_accuracy", "orthography"),
    # Cost and speed (docs/scores.md).
    Metric(
        "cost_adjusted",
        "cost-adjusted",
        column="cost_adjusted",
        sort_key="cost_adjusted",
        computed=True,
        synced=False,
    ),
    Metric("total_cost_usd", "cost (USD)", False, column="total_cost_usd", digits=4),
    Metric(
        "cost_per_entry_usd",
        "cost per entry",
        False,
        column="cost_per_entry_usd",
        sort_key="cost",
        digits=4,
    ),
    Metric(
        "cost_per_source_char",
        "cost per source char",
        False,
        column="cost_per_source_char",
        digits=6,
    ),
    Metric(
        "avg_latency_seconds",
        "mean latency",
        False,
        column="avg_latency_seconds",
        sort_key="latency",
        computed=True,
        digits=2,
    ),
    Metric("median_latency_seconds", "median latency", False, computed=True, digits=2),
    Metric("p95_latency_seconds", "p95 latency", False, computed=True, digits=2),
    Metric("tokens_per_second", "tokens/s", column="tokens_per_second", computed=True, digits=1),
    Metric(
        "entries_per_minute", "entries/min", column="entries_per_minute", computed=True, digits=1
    ),
    Metric("elapsed_seconds", "elapsed", False, column="elapsed_seconds", digits=1),
    # Exposure (docs/exposure.md): the TM baseline, the system's lead over it, GenGap, leaks.
    Metric("tm_bleu", "TM BLEU", scale=100, column="tm_bleu"),
    Metric("tm_chrf_plus_plus", "TM chrF++", scale=100, column="tm_chrf_plus_plus"),
    Metric(
        "delta_tm_bleu", "Δ TM BLEU", scale=100, column="delta_tm_bleu", sort_key="delta_tm_bleu"
    ),
    Metric("delta_tm_chrf_plus_plus", "Δ TM chrF++", scale=100, column="delta_tm_chrf_plus_plus"),
    Metric(
        "gengap_bleu", "GenGap BLEU", False, scale=100, column="gengap_bleu", sort_key="gengap_bleu"
    ),
    Metric("gengap_chrf", "GenGap chrF++", False, scale=100, column="gengap_chrf"),
    Metric("tm_gengap_bleu", "TM GenGap BLEU", False, scale=100, column="tm_gengap_bleu"),
    Metric("tm_gengap_chrf", "TM GenGap chrF++", False, scale=100, column="tm_gengap_chrf"),
    Metric("pairleak_070", "PairLeak@0.70", False, column="pairleak_070"),
    Metric("pairleak_085", "PairLeak@0.85", False, column="pairleak_085"),
    Metric("pairleak_095", "PairLeak@0.95", False, column="pairleak_095"),
    Metric("source_exact_share", "source-exact share", False, column="source_exact_share"),
    Metric("near_share", "near share", False, column="near_share"),
    Metric("medium_share", "medium share", column="medium_share"),
    Metric("far_share", "far share", column="far_share"),
    Metric("mean_source_exposure", "mean source exposure", False, column="mean_source_exposure"),
    # Human judgments (docs/human.md): each run's newest judgment set of each scheme.
    Metric(HUMAN_METRICS["mqm"], "MQM", False, column="human_mqm", sort_key="mqm", computed=True),
    Metric(
        HUMAN_METRICS["esa"], "ESA", column="human_esa", sort_key="esa", computed=True, digits=2
    ),
    Metric(HUMAN_METRICS["da"], "DA z", column="human_da_z", sort_key="da", computed=True),
    # Bootstrap interval bounds carried to Supabase (docs/statistics.md).
    Metric("chrf_ci_lower", "chrF++ CI lower", scale=100, column="chrf_ci_lower"),
    Metric("chrf_ci_upper", "chrF++ CI upper", scale=100, column="chrf_ci_upper"),
    Metric("exact_match_ci_lower", "exact match CI lower", column="exact_match_ci_lower"),
    Metric("exact_match_ci_upper", "exact match CI upper", column="exact_match_ci_upper"),
)

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}
# Leaderboard sort keys → (column, best first descending?); `created` sorts newest first.
SORT_KEYS: dict[str, tuple[str, bool]] = {
    **{m.sort_key: (m.column, m.higher_is_better) for m in METRICS if m.sort_key and m.column},
    "created": ("created_at", True),
}
# Surface metrics computed from stored statistics (0-100 corpus scores first).
SURFACE = (CHRF, BLEU, TER, EXACT_MATCH)
# Metrics resampled per difficulty tier, and stored per-entry metrics given whole-run intervals.
TIER_METRICS = (CHRF, EXACT_MATCH)
INTERVAL_ENTRY_METRICS = ("fst_acceptance_rate", "comet_score")


def metric(name: str) -> Metric | None:
    """The registered metric called `name` (judged on the last dotted part), if any."""
    return BY_NAME.get(name.rsplit(".", 1)[-1])


def label(name: str) -> str:
    """The name people read for a metric (its own name when it is not registered)."""
    found = metric(name)
    return found.label if found else name


def higher_is_better(name: str, overrides: Mapping[str, bool] | None = None) -> bool:
    """Whether a larger value is better: a direction set for the metric (`overrides`, by full
    name or last dotted part; the warehouse's `direction.<metric>` settings), else the
    registry's, else lower is better only for names ending in `_error_rate`."""
    leaf = name.rsplit(".", 1)[-1]
    for key in (name, leaf):
        if overrides and key in overrides:
            return overrides[key]
    found = metric(name)
    if found is not None:
        return found.higher_is_better
    return not name.rsplit(".", 1)[-1].endswith("_error_rate")


def on_percent_scale(name: str) -> bool:
    """Whether the metric is a corpus score on the 0-100 scale."""
    found = metric(name)
    return found is not None and found.scale == 100


def score_digits(name: str) -> int:
    """Decimals a metric is shown with (`Metric.shown_digits`; 4 for a metric the registry
    does not know, such as a plugin's)."""
    found = metric(name)
    return found.shown_digits if found is not None else 4


def format_score(name: str, value: float | None) -> str:
    """A score for people in its metric's format (`score_digits`), n/a for None."""
    if value is None:
        return "n/a"
    return f"{value:.{score_digits(name)}f}"


def synced_columns() -> tuple[str, ...]:
    """The numeric `run_cards` columns filled from leaderboard columns of the same name."""
    return tuple(m.column for m in METRICS if m.column is not None and m.synced)
