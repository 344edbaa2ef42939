"""A run on its way into the warehouse: parsed, aligned and fingerprinted first, scored only when
it is going to be written (an identical run already stored is recognised without scoring)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from warehouse.basics import short_id
from warehouse.errors import UsageError
from warehouse.ingest import checks
from warehouse.inputs.corpus_files import CorpusData
from warehouse.inputs.runcard import RunDocument
from warehouse.metrics.options import DEFAULT_OPTIONS, MetricOptions
from warehouse.metrics.plugins import PluginMetric, plugin_scores
from warehouse.metrics.scores import corpus_scores
from warehouse.metrics.surface import SegmentStats
from warehouse.metrics.surface import compute_segment_stats as _compute_stats
from warehouse.stats.arrays import RunArrays, build_run_arrays
from warehouse.stats.intervals import RunConfidence, compute_confidence
from warehouse.stats.resample import BootstrapSettings


def run_fingerprint(
    test_corpus_id: str,
    model_slug: str,
    condition: str | None,
    settings: dict[str, Any],
    hyps: Sequence[str],
    errored: Sequence[bool],
) -> str:
    """Content id of a run: test set, hypotheses, error flags, model, condition, settings."""
    header = {
        "format": 1,
        "test_corpus_id": test_corpus_id,
        "model_slug": model_slug,
        "condition": condition,
        "settings": settings,
    }
    digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
    digest.update(json.dumps(list(hyps), ensure_ascii=False).encode("utf-8"))
    digest.update(json.dumps(list(errored)).encode())
    return short_id(digest.hexdigest())


@dataclass
class PreparedRun:
    """A run parsed and aligned with its test set; nothing touched the warehouse.

    `score()` computes the per-segment statistics, the bootstrap intervals (when `bootstrap`
    is set) and the warnings that need scores; `run_id` is known before that.
    """

    label: str
    test_corpus_id: str
    test_name: str
    new_test_set: CorpusData | None
    model_slug: str
    condition: str | None
    created_at: datetime
    hyps: list[str]
    errors: list[str | None]
    latency: list[float | None]
    entry_tokens: dict[str, list[int | None]]
    refs: list[list[str]]  # each segment's references
    seg_metrics: list[tuple[int, str, float]]
    run_metrics: dict[str, float]
    document: RunDocument | None
    settings: dict[str, Any]
    ci: dict[str, Any] | None
    run_id: str = ""
    warnings: list[str] = field(default_factory=list)
    difficulty: list[int | None] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # segment ids (default: line numbers)
    sources: list[str] = field(default_factory=list)
    options: MetricOptions = DEFAULT_OPTIONS
    bootstrap: BootstrapSettings | None = None
    plugins: list[PluginMetric] = field(default_factory=list)
    _stats: SegmentStats | None = field(default=None, repr=False)
    _confidence: RunConfidence | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.run_id:
            self.run_id = self._fingerprint()

    def _fingerprint(self) -> str:
        """Content id of the run (`run_fingerprint`)."""
        errored = [e is not None for e in self.errors]
        return run_fingerprint(self.test_corpus_id, self.model_slug, self.condition,
                               self.settings, self.hyps, errored)  # fmt: skip

    def use_plugins(self, plugins: Sequence[PluginMetric]) -> PreparedRun:
        """Score the run with metric plugins too: their signatures join its settings (its id
        changes with them); their values are computed by `score()`. Returns self."""
        if not plugins:
            return self
        carried = {m for _, m, _ in self.seg_metrics} | set(self.run_metrics)
        clash = sorted(p.name for p in plugins if p.name in carried)
        if clash:
            raise UsageError(
                f"{self.label}: already carries {', '.join(clash)}; a metric plugin does not "
                "overwrite ingested values"
            )
        signatures = {p.name: p.signature for p in plugins}
        self.settings = {**self.settings,
                         "signatures": {**self.settings["signatures"], **signatures}}  # fmt: skip
        self.plugins = list(plugins)
        self.run_id = self._fingerprint()
        return self

    def plugin_values(self) -> list[tuple[int, str, float]]:
        """The plugins' per-segment values, computed once (added to the entry metrics)."""
        if self.plugins and not any(m == self.plugins[0].name for _, m, _ in self.seg_metrics):
            rows = plugin_scores(self.plugins, self.sources, self.hyps, self.refs, self.errors,
                                 self.label)  # fmt: skip
            self.seg_metrics = sorted(self.seg_metrics + rows)
            return rows
        names = {p.name for p in self.plugins}
        return [row for row in self.seg_metrics if row[1] in names]

    @property
    def scored(self) -> bool:
        """Whether `score()` has run."""
        return self._stats is not None

    @property
    def stats(self) -> SegmentStats:
        """The per-segment statistics (computed on first use)."""
        if self._stats is None:
            errored = [e is not None for e in self.errors]
            self._stats = _compute_stats(self.hyps, self.refs, errored, options=self.options)
        return self._stats

    @property
    def confidence(self) -> RunConfidence | None:
        """The bootstrap intervals (None without `bootstrap` settings)."""
        if self._confidence is None and self.bootstrap is not None:
            self._confidence = compute_confidence(self.arrays(), self.bootstrap)
        return self._confidence

    def score(self) -> PreparedRun:
        """Compute statistics, intervals and the score-based input checks; returns self."""
        if not self.scored:
            self.plugin_values()
            scores = self.scores()
            hyps, refs, errors = self.hyps, self.refs, self.errors
            sample = checks.alignment_sample(hyps, refs, errors)  # shared by two checks
            shifted = checks.shifted_lines(hyps, refs, errors, sample)
            self.warnings += shifted or checks.locally_shifted(hyps, refs, errors)
            self.warnings += checks.equal_to_references(hyps, refs, errors)
            self.warnings += checks.unrelated_to_references(hyps, refs, errors, sample)
            if self.document is not None:
                self.warnings += checks.claimed_scores_differ(
                    self.document, scores, self.settings.get("signatures")
                )
            _ = self.confidence
        return self

    def scores(self) -> dict[str, float | None]:
        """Corpus BLEU, chrF++, TER (None when not computed) and exact-match rate."""
        stats = self.stats
        out: dict[str, float | None] = dict(
            corpus_scores(stats.bleu, stats.chrf, stats.ter if self.options.ter else [])
        )
        if not self.options.ter:
            out["ter"] = None
        evaluated = [m for m in stats.exact_match if m is not None]
        out["exact_match_rate"] = sum(evaluated) / len(evaluated) if evaluated else None
        return out

    def arrays(self, label: str | None = None) -> RunArrays:
        """The run's per-segment statistics and per-entry metrics as arrays, keyed by segment
        id — what `load_run_arrays` reads back once the run is stored."""
        n = len(self.hyps)
        return build_run_arrays(
            run_id=self.run_id,
            label=self.label if label is None else label,
            test_corpus_id=self.test_corpus_id,
            keys=self.keys or [str(i) for i in range(n)],
            bleu=self.stats.bleu,
            chrf=self.stats.chrf,
            ter=self.stats.ter,
            exact=self.stats.exact_match,
            difficulty=self.difficulty or [None] * n,
            entry_values=self.seg_metrics,
            test_set=self.test_name,
        )

    def run_card(self) -> dict[str, Any]:
        """The JSON stored in `runs.run_card`: the input document as given, or a minimal card."""
        if self.document is not None:
            return self.document.doc
        return {"model_slug": self.model_slug, "condition": self.condition}


@dataclass(frozen=True)
class IngestResult:
    """What happened to one run: `added`, `unchanged` or `replaced`."""

    action: str
    run_id: str
    label: str
    model_slug: str
    condition: str | None
    test_set: str
    test_set_created: bool
    n_entries: int
    n_errors: int
    scores: dict[str, float | None]
    warnings: list[str]
    intervals: list[dict[str, Any]] = field(default_factory=list)
    new_model: bool = False  # no run of its model was stored before this ingest

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)
