"""Surface metrics from text: sacrebleu's per-segment sufficient statistics, exact match,
length ratio and sentence chrF++.

BLEU (13a, exp smoothing), chrF++ (`CHRF(word_order=2)`) and TER are stored per segment as the
statistics sacrebleu sums for its corpus score, so any subset's score is a sum plus a formula
(`warehouse.metrics.scores`) and equals sacrebleu's `corpus_score` on that subset exactly.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from warehouse.native import native

if TYPE_CHECKING:  # sacrebleu is imported on first use: BLEU and chrF++ statistics are native
    from sacrebleu.metrics import TER


@lru_cache(maxsize=1)
def _ter() -> TER:
    """sacrebleu's TER with default settings (its statistics are extracted by sacrebleu)."""
    from sacrebleu.metrics import TER

    return TER()


@dataclass(frozen=True)
class SegmentStats:
    """Per-segment statistics of one run, aligned with its hypotheses."""

    bleu: list[list[int]]
    chrf: list[list[int]]
    ter: list[list[float]]
    chrf_sentence: list[float]
    exact_match: list[bool | None]
    length_ratio: list[float | None]


def signatures(n_refs: int) -> dict[str, str]:
    """sacrebleu signatures of the stored statistics for a test set with `n_refs` references."""
    out: dict[str, str] = {}
    from sacrebleu.metrics import BLEU, CHRF, TER

    fresh = (BLEU(tokenize="13a"), CHRF(word_order=2), TER())
    for name, metric in zip(("bleu", "chrf", "ter"), fresh, strict=True):
        metric.num_refs = n_refs  # what sacrebleu records once it has seen the references
        out[name] = metric.get_signature().format()
    return out


def metric_settings(n_refs: int) -> dict[str, Any]:
    """The settings that define the stored statistics (part of a run's fingerprint)."""
    import sacrebleu

    return {"sacrebleu": sacrebleu.__version__, "signatures": signatures(n_refs)}


def _streams(refs: Sequence[Sequence[str]]) -> list[list[str]]:
    """Per-segment reference lists → sacrebleu's reference streams."""
    width = max((len(r) for r in refs), default=0)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]  # type: ignore[misc]


def compute_segment_stats(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    errored: Sequence[bool],
    *,
    with_ter: bool = True,
) -> SegmentStats:
    """Statistics for every segment (TER's empty unless `with_ter`); errored: NULL exact match."""
    hyp_list = list(hyps)
    ref_lists = [list(r) for r in refs]
    # BLEU and chrF++ statistics from the Rust kernel, defined to equal sacrebleu's (tests
    # compare them on hostile text); every segment needs a reference, as in sacrebleu.
    raw_bleu, raw_chrf, chrf_sentence = native.surface_stats(hyp_list, ref_lists)
    raw_ter: list[Any] = []
    if with_ter:
        logger = logging.getLogger("sacrebleu")
        previous = logger.level
        logger.setLevel(logging.ERROR)  # the "tokenized period" hint is not about our data
        try:
            raw_ter = _ter()._extract_corpus_statistics(hyp_list, _streams(ref_lists))
        finally:
            logger.setLevel(previous)
    bleu_stats: list[list[int]] = raw_bleu
    chrf_stats: list[list[int]] = raw_chrf
    ter_stats = [[float(v) for v in s] for s in raw_ter]
    exact: list[bool | None] = []
    ratio: list[float | None] = []
    for hyp, seg_refs, failed in zip(hyp_list, refs, errored, strict=True):
        if failed:
            exact.append(None)
            ratio.append(None)
            continue
        stripped = hyp.strip()
        exact.append(any(stripped == r.strip() for r in seg_refs))
        ratio.append(len(hyp) / len(seg_refs[0]) if seg_refs and seg_refs[0] else None)
    return SegmentStats(bleu_stats, chrf_stats, ter_stats, chrf_sentence, exact, ratio)
