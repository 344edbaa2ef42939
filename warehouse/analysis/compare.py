"""Comparing runs: side-by-side scores on their common segments and a paired test of every pair.

A run is named by a run id or unique prefix in the warehouse, or by a test-report / run-card
JSON file, which is parsed and scored in memory (the user's warehouse and the file are only read).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from warehouse.analysis.runs import resolve_run
from warehouse.errors import UsageError
from warehouse.exposure.config import EXPOSURE_BINS
from warehouse.exposure.summary import choose_audit
from warehouse.ingest.prepare import prepare_from_document
from warehouse.metrics.registry import BLEU, CHRF, EXACT_MATCH, TER
from warehouse.metrics.surface import without_version
from warehouse.stats.arrays import RunArrays, load_run_arrays
from warehouse.stats.resample import BootstrapSettings, run_scores
from warehouse.stats.significance import METHODS, PairTest, compare_pair, method_settings
from warehouse.store.settings import metric_directions


def is_report_file(ref: str) -> bool:
    """Whether a run argument names an existing file (else it is a run id or prefix)."""
    return Path(ref).is_file()


def load_runs(refs: Sequence[str], con: duckdb.DuckDBPyConnection | None) -> list[RunArrays]:
    """Per-segment arrays of each named run: report files are parsed and scored in memory (never
    written anywhere), run ids and prefixes are read from `con` (needed only when some argument
    is not a file)."""
    runs: list[RunArrays] = []
    for ref in refs:
        if is_report_file(ref):
            # A report without a model slug is named after its file.
            prepared = prepare_from_document(ref, fallback_model_slug=Path(ref).stem)
            condition = f"/{prepared.condition}" if prepared.condition else ""
            runs.append(prepared.arrays(label=f"{ref} ({prepared.model_slug}{condition})"))
        else:
            if con is None:
                raise UsageError(f"{ref!r} is neither a file nor a run in the warehouse")
            runs.append(load_run_arrays(con, resolve_run(con, ref)))
    return runs


def restrict_to_bin(
    con: duckdb.DuckDBPyConnection, runs: Sequence[RunArrays], bin_name: str, train: str | None
) -> list[RunArrays]:
    """Each run restricted to its test set's segments in one exposure bin, by the audit the
    leaderboard would use (against `train` when given)."""
    if bin_name not in EXPOSURE_BINS:
        raise UsageError(f"--bin: expected one of {', '.join(EXPOSURE_BINS)}, got {bin_name!r}")
    out = []
    for run in runs:
        audit_id = choose_audit(con, run.test_corpus_id, train)
        if audit_id is None:
            raise UsageError(
                f"--bin needs an exposure audit of test set {run.test_set or run.test_corpus_id!r}"
                "; run `tame-wh audit` first"
            )
        rows = con.execute(
            "SELECT s.seg_key FROM exposures e JOIN segments s ON s.corpus_id = ? "
            "AND s.seg_idx = e.seg_idx WHERE e.audit_id = ? AND e.bin = ?",
            [run.test_corpus_id, audit_id, bin_name],
        ).fetchall()
        keys = {k for (k,) in rows}
        picked = np.array([i for i, k in enumerate(run.keys) if k in keys], dtype=np.int64)
        if picked.size == 0:
            raise UsageError(f"no segment of run {run.run_id}'s test set is in the {bin_name} bin")
        out.append(replace(run.take(picked), label=f"{run.label} [{bin_name} bin]"))
    return out


@dataclass(frozen=True)
class MetricRow:
    """One metric for every run (argument order) and the first run minus each of the others."""

    metric: str
    values: list[float | None]
    deltas: list[float | None]


@dataclass
class Comparison:
    """Side-by-side scores and, when asked for, the paired tests of every pair of runs."""

    runs: list[RunArrays]
    n_segments: int
    rows: list[MetricRow]
    settings: BootstrapSettings | None = None
    method: str | None = None
    pairs: list[PairTest] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; `significance` lists the objects of docs/statistics.md by run pair."""
        out: dict[str, Any] = {
            "runs": [{"run_id": r.run_id, "label": r.label} for r in self.runs],
            "n_segments": self.n_segments,
            "metrics": [
                {"metric": row.metric, "values": row.values, "deltas": row.deltas}
                for row in self.rows
            ],
            "warnings": self.warnings,
        }
        if self.settings is not None:
            out.update(
                method=self.method,
                n_bootstrap=self.settings.n_bootstrap,
                alpha=self.settings.alpha,
                confidence_level=self.settings.confidence_level,
                seed=self.settings.seed,
                pairs=[p.to_dict() for p in self.pairs],
                significance=[
                    {"run_a": p.run_a, "run_b": p.run_b, **r.to_dict()}
                    for p in self.pairs
                    for r in p.results
                ],
            )
        return out


def run_letters(n: int) -> list[str]:
    """The letters naming `n` compared runs in tables: A, B, C, ... (A2, B2, ... past Z)."""
    return [chr(ord("A") + i % 26) + (str(i // 26 + 1) if i >= 26 else "") for i in range(n)]


def _common(runs: Sequence[RunArrays]) -> tuple[list[RunArrays], list[str]]:
    """Every run restricted to the segment ids all of them have (in the first run's order)."""
    shared = set(runs[0].keys)
    for run in runs[1:]:
        shared &= set(run.keys)
    if not shared:
        raise UsageError("the runs have no segment ids in common; nothing to compare")
    order = [k for k in runs[0].keys if k in shared]
    warnings = []
    aligned = []
    for letter, run in zip(run_letters(len(runs)), runs, strict=True):
        if len(shared) < run.n_segments:
            warnings.append(
                f"{letter} ({run.run_id}): {run.n_segments - len(shared)} of {run.n_segments} "
                "segments have ids another run lacks; the table leaves them out"
            )
        position = {k: i for i, k in enumerate(run.keys)}
        aligned.append(run.take(np.array([position[k] for k in order], dtype=np.int64)))
    return aligned, warnings


def side_by_side(runs: Sequence[RunArrays]) -> tuple[list[MetricRow], int, list[str]]:
    """chrF++, BLEU, TER, exact match and every per-entry metric of each run on the segments all
    runs share, with the first run's lead over each other run."""
    aligned, warnings = _common(runs)
    scores = []
    for run in aligned:
        one: dict[str, float | None] = dict(run_scores(run))
        scores.append(one)
    entry = sorted({m for run in aligned for m in run.entry_metrics})
    rows = []
    for metric in [CHRF, BLEU, TER, EXACT_MATCH, *entry]:
        values = [s.get(metric) for s in scores]
        first = values[0]
        deltas = [None if first is None or v is None else first - v for v in values[1:]]
        rows.append(MetricRow(metric, values, deltas))
    return rows, aligned[0].n_segments, warnings


def _check_same_test_set(runs: Sequence[RunArrays], allow: bool) -> None:
    """Refuse runs on different test sets, naming each by its test set's name."""
    if allow or len({r.test_corpus_id for r in runs}) <= 1:
        return
    first = runs[0]
    other = next(r for r in runs if r.test_corpus_id != first.test_corpus_id)
    raise UsageError(
        f"the runs are on different test sets: {first.run_id} on "
        f"{first.test_set or first.test_corpus_id!r}, {other.run_id} on "
        f"{other.test_set or other.test_corpus_id!r}; pass --allow-different-testsets to "
        "compare them by segment id anyway"
    )


def compare_runs(
    runs: Sequence[RunArrays],
    *,
    significance: bool = False,
    method: str = "sign",
    settings: BootstrapSettings | None = None,
    allow_different_testsets: bool = False,
    directions: Mapping[str, bool] | None = None,
) -> Comparison:
    """Side-by-side scores of two or more runs and, with `significance`, every pair tested.

    Runs on different test sets are refused unless `allow_different_testsets` (their segments
    would be paired by id alone, which says nothing about whether the sentences match).
    `directions` sets metrics' directions (the warehouse's `direction.<metric>` settings)."""
    if len(runs) < 2:
        raise UsageError("give at least two runs to compare")
    if method not in METHODS:
        raise UsageError(f"--method: expected one of {', '.join(METHODS)}, got {method!r}")
    _check_same_test_set(runs, allow_different_testsets)
    rows, n_common, warnings = side_by_side(runs)
    if not significance and len({r.test_corpus_id for r in runs}) > 1:
        warnings.append("the runs are on different test sets; segments were matched by id")
    result = Comparison(list(runs), n_common, rows, warnings=warnings)
    if significance:
        result.settings = settings or BootstrapSettings()
        result.method = method
        result.pairs = [
            compare_pair(a, b, method=method, settings=result.settings, directions=directions)
            for a, b in combinations(runs, 2)
        ]
    return result


def compare(
    con: duckdb.DuckDBPyConnection | None,
    refs: Sequence[str],
    *,
    significance: bool = False,
    method: str = "sign",
    n_bootstrap: int | None = None,
    alpha: float | None = None,
    seed: int | None = None,
    bin_name: str | None = None,
    train: str | None = None,
    allow_different_testsets: bool = False,
) -> Comparison:
    """Compare the named runs (ids, prefixes, model slugs or report files), with the settings
    and metric directions of the warehouse `con` when there is one."""
    if len(refs) < 2:
        raise UsageError("give at least two runs (run ids, prefixes or report files)")
    settings = method_settings(con, method, n_bootstrap, alpha, seed)
    directions = metric_directions(con)
    arrays = load_runs(refs, con)
    if bin_name is not None:
        if con is None:
            raise UsageError("--bin needs the warehouse's exposure audits; none exists here")
        arrays = restrict_to_bin(con, arrays, bin_name, train)
    result = compare_runs(
        arrays,
        significance=significance,
        method=method,
        settings=settings,
        allow_different_testsets=allow_different_testsets,
        directions=directions,
    )
    if con is not None:
        result.warnings += signature_differences(con, [r.run_id for r in arrays])
    return result


def signature_differences(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> list[str]:
    """One warning per metric the stored runs computed under different signatures (another
    tokenizer or chrF word order, another COMET model, another plugin version): its scores are
    not comparable across them."""
    stored = dict(
        con.execute(
            "SELECT run_id, metric_settings FROM runs WHERE list_contains(?, run_id)",
            [list(run_ids)],
        ).fetchall()
    )
    by_metric: dict[str, dict[str, list[str]]] = {}
    for run_id in run_ids:
        if run_id not in stored:
            continue  # a report file compared in memory
        signatures = json.loads(stored[run_id] or "{}").get("signatures") or {}
        for metric, signature in signatures.items():
            key = without_version(str(signature))
            by_metric.setdefault(metric, {}).setdefault(key, []).append(run_id)
    return [
        f"{metric} is not comparable across these runs: "
        + "; ".join(f"{', '.join(ids)} computed it as {sig}" for sig, ids in found.items())
        for metric, found in sorted(by_metric.items())
        if len(found) > 1
    ]
