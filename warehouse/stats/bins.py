"""Bootstrap intervals per exposure bin and for GenGap (docs/statistics.md#intervals-per-bin).

The segments of each bin are resampled within their bin (a stratified bootstrap: every resample
keeps each bin's size), the system's and the TM's statistics with the same draws, so a bin's
system - TM difference is paired. GenGap = score on `near` - score on `far` takes each resample's
near and far draws together; the system's GenGap exceeds the TM's when the difference of the two
GenGaps is above 0 in all but a share alpha of the resamples (a one-sided bootstrap test).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from warehouse.exposure.config import EXPOSURE_BINS
from warehouse.stats.resample import BootstrapSettings, percentile_interval, resample_sums

Scorer = Callable[[np.ndarray], np.ndarray]  # summed statistics (rows) → one score per row
Interval = tuple[float, float] | None


@dataclass(frozen=True)
class Sides:
    """One metric's per-segment statistics for the system and its TM baseline (None: the audit
    has none), and how summed statistics become a score."""

    system: np.ndarray
    tm: np.ndarray | None
    score: Scorer


@dataclass(frozen=True)
class BinIntervals:
    """Per bin and metric the intervals of the system, the TM and system - TM; per metric the
    GenGap intervals of both, of their difference, and the test that the system's is larger."""

    settings: BootstrapSettings
    bins: dict[str, dict[str, dict[str, Interval]]]
    gengap: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""

        def pair(interval: Interval) -> list[float] | None:
            return None if interval is None else [interval[0], interval[1]]

        return {
            "method": "percentile bootstrap, segments resampled within their bin",
            "n_bootstrap": self.settings.n_bootstrap,
            "alpha": self.settings.alpha,
            "seed": self.settings.seed,
            "bins": {
                name: {
                    metric: {side: pair(v) for side, v in sides.items()}
                    for metric, sides in metrics.items()
                }
                for name, metrics in self.bins.items()
            },
            "gengap": {
                metric: {
                    key: pair(value) if key != "p_exceeds" and key != "exceeds_tm" else value
                    for key, value in found.items()
                }
                for metric, found in self.gengap.items()
            },
        }


def _draws(rows: np.ndarray, settings: BootstrapSettings, rng: np.random.Generator) -> np.ndarray:
    """`settings.n_bootstrap` resamples of a bin's rows (positions within the bin), drawn with
    replacement within the bin."""
    return rng.integers(0, rows.size, size=(settings.n_bootstrap, rows.size))


def _sums(shared: dict[Any, Any], name: str, stats: np.ndarray) -> np.ndarray:
    """A bin's statistics summed over each of its resamples (`shared` holds its draws).
    Integer statistics go through the draws' counts: a matrix product in float64 that is exact
    (every sum is an integer far below 2**53) and, for many runs on one set of draws, several
    times faster than summing the drawn rows one by one; others are summed as drawn."""
    picks = shared["draws", name]
    if stats.dtype != np.int64:
        return resample_sums(stats, picks)
    if ("counts", name) not in shared:
        flat = (np.arange(picks.shape[0])[:, None] * picks.shape[1] + picks).ravel()
        counts = np.bincount(flat, minlength=picks.size).reshape(picks.shape)
        shared["counts", name] = counts.astype(np.float64)
    return (shared["counts", name] @ stats.astype(np.float64)).astype(np.int64)


def bin_intervals(
    bin_of: Sequence[str],
    metrics: Mapping[str, Sides],
    settings: BootstrapSettings,
    shared: dict[Any, Any] | None = None,
) -> BinIntervals:
    """Intervals of every bin's scores (system, TM, system - TM) and of GenGap, from segments
    resampled within their bins with numpy's `default_rng(settings.seed)` (bins drawn in the
    order of EXPOSURE_BINS). `shared` keeps the draws and the TM's resampled scores for the
    next call with the same bins and TM statistics (the runs of one audited test set): the same
    numbers, drawn and summed once."""
    labels = np.asarray(bin_of)
    rng = np.random.default_rng(settings.seed)
    shared = {} if shared is None else shared
    samples: dict[str, dict[str, tuple[np.ndarray, np.ndarray | None]]] = {}
    out_bins: dict[str, dict[str, dict[str, Interval]]] = {}
    for name in EXPOSURE_BINS:
        rows = np.flatnonzero(labels == name)
        if rows.size == 0:
            continue
        if ("draws", name) not in shared:
            shared["draws", name] = _draws(rows, settings, rng)
        samples[name] = {}
        out_bins[name] = {}
        for metric, sides in metrics.items():
            system = sides.score(_sums(shared, name, sides.system[rows]))
            if sides.tm is not None and ("tm", name, metric) not in shared:
                shared["tm", name, metric] = sides.score(_sums(shared, name, sides.tm[rows]))
            tm = shared["tm", name, metric] if sides.tm is not None else None
            samples[name][metric] = (system, tm)
            out_bins[name][metric] = {
                "system": percentile_interval(system, settings.alpha),
                "tm": percentile_interval(tm, settings.alpha) if tm is not None else None,
                "delta": percentile_interval(system - tm, settings.alpha)
                if tm is not None
                else None,
            }
    gengap: dict[str, dict[str, Any]] = {}
    if "near" in samples and "far" in samples:
        for metric in metrics:
            near_system, near_tm = samples["near"][metric]
            far_system, far_tm = samples["far"][metric]
            system = near_system - far_system
            if near_tm is None or far_tm is None:  # no TM baseline to compare with
                gengap[metric] = {
                    "system": percentile_interval(system, settings.alpha),
                    "tm": None,
                    "difference": None,
                    "p_exceeds": None,
                    "exceeds_tm": None,
                }
                continue
            tm = near_tm - far_tm
            difference = system - tm
            finite = difference[np.isfinite(difference)]
            p = float(np.mean(finite <= 0)) if finite.size else 1.0
            gengap[metric] = {
                "system": percentile_interval(system, settings.alpha),
                "tm": percentile_interval(tm, settings.alpha),
                "difference": percentile_interval(difference, settings.alpha),
                "p_exceeds": p,
                "exceeds_tm": bool(p < settings.alpha),
            }
    return BinIntervals(settings, out_bins, gengap)
