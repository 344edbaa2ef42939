"""Surface metrics from text: sacrebleu's per-segment sufficient statistics, exact match,
length ratio and sentence chrF++.

BLEU (13a, exp smoothing), chrF++ (`CHRF(word_order=2)`) and TER are stored per segment as the
statistics sacrebleu sums for its corpus score, so any subset's score is a sum plus a formula
(`warehouse.metrics.scores`) and equals sacrebleu's `corpus_score` on that subset exactly. The
statistics of 13a BLEU, chrF++ and TER come from the Rust kernels (`native.surface_stats`,
`native.ter_stats`), defined to equal sacrebleu's (tests compare them on hostile text).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np

from warehouse.metrics.options import DEFAULT_OPTIONS, MetricOptions
from warehouse.metrics.scores import CHRF_STATS, chrf_scores
from warehouse.native import native


@dataclass(frozen=True)
class SegmentStats:
    """Per-segment statistics of one run, aligned with its hypotheses."""

    bleu: list[list[int]]
    chrf: list[list[int]]
    ter: list[list[float]]
    chrf_sentence: list[float]
    exact_match: list[bool | None]
    length_ratio: list[float | None]


# Tokenizers built into sacrebleu: their signatures are spelled out here (the same text as
# sacrebleu's `get_signature().format()`, pinned by a test for every option), so recording them
# does not import sacrebleu; the MeCab ones name their package's version and ask sacrebleu.
_BUILT_IN_TOKENIZERS = ("13a", "intl", "char", "none", "zh")


@cache
def sacrebleu_version() -> str:
    """The installed sacrebleu's version (read from its package metadata, without importing it)."""
    from importlib.metadata import version

    return version("sacrebleu")


def _spelled_signatures(n_refs: int, options: MetricOptions) -> dict[str, str]:
    """`signatures` for a built-in tokenizer, without sacrebleu's metric objects."""
    tail = f"version:{sacrebleu_version()}"
    case = "lc" if options.lowercase else "mixed"
    out = {
        "bleu": f"nrefs:{n_refs}|case:{case}|eff:no|tok:{options.tokenize}|smooth:exp|{tail}",
        "chrf": (
            f"nrefs:{n_refs}|case:{case}|eff:yes|nc:6|nw:{options.chrf_word_order}|space:no|{tail}"
        ),
    }
    if options.ter:
        out["ter"] = f"nrefs:{n_refs}|case:lc|tok:tercom|norm:no|punct:yes|asian:no|{tail}"
    return out


def without_version(signature: str) -> str:
    """A signature without sacrebleu's `version:` part (an upgrade alone changes no score)."""
    return "|".join(p for p in signature.split("|") if not p.startswith("version:"))


def signatures(n_refs: int, options: MetricOptions = DEFAULT_OPTIONS) -> dict[str, str]:
    """sacrebleu signatures of the stored statistics for a test set with `n_refs` references."""
    if options.tokenize in _BUILT_IN_TOKENIZERS:
        return _spelled_signatures(n_refs, options)
    return sacrebleu_signatures(n_refs, options)


def sacrebleu_signatures(n_refs: int, options: MetricOptions = DEFAULT_OPTIONS) -> dict[str, str]:
    """`signatures` as sacrebleu's own metric objects format them."""
    out: dict[str, str] = {}
    for name, metric in options.sacrebleu_metrics().items():
        metric.num_refs = n_refs  # what sacrebleu records once it has seen the references
        out[name] = metric.get_signature().format()
    return out


def metric_settings(n_refs: int, options: MetricOptions = DEFAULT_OPTIONS) -> dict[str, Any]:
    """The settings that define the stored statistics (part of a run's fingerprint); the
    default options give the same document as before options existed."""
    out: dict[str, Any] = {
        "sacrebleu": sacrebleu_version(),
        "signatures": signatures(n_refs, options),
    }
    if options != DEFAULT_OPTIONS:
        out["options"] = asdict(options)
    return out


def _streams(refs: Sequence[Sequence[str]]) -> list[list[str]]:
    """Per-segment reference lists → sacrebleu's reference streams."""
    width = max((len(r) for r in refs), default=0)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]  # type: ignore[misc]


@contextmanager
def _quiet_sacrebleu() -> Iterator[None]:
    """Silence sacrebleu's "tokenized period" hint (it is not about our data)."""
    logger = logging.getLogger("sacrebleu")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _chrf_without_words(rows: list[list[int]]) -> tuple[list[list[int]], list[float]]:
    """chrF (word order 0) statistics and sentence scores from chrF++ statistics: the word
    n-gram columns zeroed (orders with nothing to count drop out of the average)."""
    stats = np.asarray(rows, dtype=np.int64).reshape(-1, CHRF_STATS)
    stats[:, 3 * 6 :] = 0
    return stats.tolist(), chrf_scores(stats).tolist()


def compute_segment_stats(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    errored: Sequence[bool],
    *,
    with_ter: bool = True,
    options: MetricOptions = DEFAULT_OPTIONS,
) -> SegmentStats:
    """Statistics for every segment (TER's empty unless `with_ter` and `options.ter`); errored
    entries: NULL exact match. Exact match and length ratio always compare the raw text."""
    hyp_list = list(hyps)
    ref_lists = [list(r) for r in refs]
    hyp_in, refs_in = hyp_list, ref_lists
    if options.lowercase:
        hyp_in = [h.lower() for h in hyp_list]
        refs_in = [[r.lower() for r in rs] for rs in ref_lists]
    # BLEU (13a) and chrF++ statistics from the Rust kernel, defined to equal sacrebleu's (tests
    # compare them on hostile text); every segment needs a reference, as in sacrebleu.
    raw_bleu, raw_chrf, chrf_sentence = native.surface_stats(hyp_in, refs_in)
    if options.tokenize != "13a":
        with _quiet_sacrebleu():
            raw_bleu = [
                [int(v) for v in s]
                for s in options.bleu()._extract_corpus_statistics(hyp_list, _streams(ref_lists))
            ]
    if options.chrf_word_order == 0:
        raw_chrf, chrf_sentence = _chrf_without_words(raw_chrf)
    # TER (sacrebleu's defaults: lowercased, tercom whitespace) from the Rust kernel, defined to
    # equal sacrebleu's `TER()` statistics; it ignores `options.lowercase`, as sacrebleu's TER does.
    ter_stats: list[list[float]] = []
    if with_ter and options.ter:
        ter_stats = native.ter_stats(hyp_list, ref_lists)
    bleu_stats: list[list[int]] = raw_bleu
    chrf_stats: list[list[int]] = raw_chrf
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
