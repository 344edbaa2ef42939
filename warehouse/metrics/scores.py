"""Corpus BLEU, chrF++ and TER from summed sufficient statistics: the one Python implementation.

Each function takes rows of summed statistics (one row per corpus, bin or resample) and returns
one score per row, repeating sacrebleu 2.6's operations in sacrebleu's order with the `math`
module's logarithm and exponential, so every score equals sacrebleu's `corpus_score` on the same
segments exactly. Integer sums are scored in float64; float32 sums (what sacrebleu's paired tests
sum) are scored with float32 arithmetic where sacrebleu's is. The SQL macros of
`sql/views/01_score_macros.sql` compute the same formulas in SQL. Definitions: docs/metrics.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

BLEU_STATS = 10  # hyp_len, ref_len, correct[1..4], total[1..4]
CHRF_STATS = 24  # (6 character + 2 word orders) x (hyp, ref, match)
TER_STATS = 2  # edits, reference length

_BLEU_ORDERS = 4
_CHRF_ORDERS = 8  # 6 character + 2 word orders
_CHRF_BETA_SQ = 4  # beta = 2
_CHRF_EPS = 1e-16
_LOG_FLOOR = -9999999999.0  # sacrebleu's log(0)


def _rows(sums: npt.ArrayLike, width: int) -> np.ndarray:
    """Summed statistics as a two-dimensional array of `width` columns (dtype kept)."""
    array = np.asarray(sums)
    if array.dtype != np.float32 and array.dtype.kind != "f":
        array = array.astype(np.int64, copy=False)
    return array.reshape(-1, width)


def _working_dtype(rows: np.ndarray) -> type[np.floating]:
    """float32 for float32 sums (sacrebleu's paired tests), else float64."""
    return np.float32 if rows.dtype == np.float32 else np.float64


def _elementwise(fn: object, values: np.ndarray) -> np.ndarray:
    """`math.log` or `math.exp` applied to each float64 value (numpy's may differ in the last
    bit; sacrebleu calls the math module's)."""
    return np.fromiter(map(fn, values.astype(np.float64).tolist()), np.float64, len(values))  # type: ignore[call-overload]


def bleu_scores(sums: npt.ArrayLike) -> np.ndarray:
    """BLEU (exp smoothing, as `BLEU(tokenize=...)` sums it) of each row of summed
    [hyp_len, ref_len, correct1-4, total1-4] statistics."""
    s = _rows(sums, 2 + 2 * _BLEU_ORDERS)
    dtype = _working_dtype(s)
    sys_len = s[:, 0].astype(np.int64)
    ref_len = s[:, 1].astype(np.int64)
    shorter = sys_len < ref_len
    bp = np.ones(len(s))
    ratio = np.divide(ref_len, sys_len, out=np.zeros(len(s)), where=sys_len > 0)
    penalised = shorter & (sys_len > 0)
    bp[penalised] = _elementwise(math.exp, 1 - ratio[penalised])
    bp[shorter & (sys_len <= 0)] = 0.0
    correct = s[:, 2 : 2 + _BLEU_ORDERS].astype(dtype)
    total = s[:, 2 + _BLEU_ORDERS :].astype(dtype)
    log_sum = np.zeros(len(s))
    active = np.ones(len(s), dtype=bool)  # sacrebleu stops at the first order with no n-grams
    smooth = np.ones(len(s))
    for n in range(_BLEU_ORDERS):
        c, t = correct[:, n], total[:, n]
        active &= t != 0
        missing = active & (c == 0)
        smooth = np.where(missing, smooth * 2, smooth)
        with np.errstate(divide="ignore", invalid="ignore"):
            smoothed = dtype(100.0) / (smooth.astype(dtype) * t)
            plain = dtype(100.0) * c / t
        precision = np.where(active, np.where(missing, smoothed, plain), dtype(0.0))
        logs = np.full(len(s), _LOG_FLOOR)
        nonzero = precision != 0
        logs[nonzero] = _elementwise(math.log, precision[nonzero])
        log_sum = log_sum + logs
    score = bp * _elementwise(math.exp, log_sum / _BLEU_ORDERS)
    return np.where(correct.any(axis=1), score, 0.0)


def chrf_scores(sums: npt.ArrayLike) -> np.ndarray:
    """chrF++ (beta 2, effective-order averaging, as `CHRF(word_order=2)`) of each row of
    summed [hyp, ref, match] x 8 orders statistics."""
    s = _rows(sums, 3 * _CHRF_ORDERS)
    dtype = _working_dtype(s)
    avg_prec = np.zeros(len(s), dtype=dtype)
    avg_rec = np.zeros(len(s), dtype=dtype)
    effective = np.zeros(len(s), dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(_CHRF_ORDERS):
            hyp = s[:, 3 * i].astype(dtype)
            ref = s[:, 3 * i + 1].astype(dtype)
            match = s[:, 3 * i + 2].astype(dtype)
            both = (hyp > 0) & (ref > 0)
            avg_prec = np.where(both, avg_prec + match / hyp, avg_prec)
            avg_rec = np.where(both, avg_rec + match / ref, avg_rec)
            effective += both
        order = np.maximum(effective, 1).astype(dtype)
        avg_prec = np.where(effective > 0, avg_prec / order, dtype(0.0))
        avg_rec = np.where(effective > 0, avg_rec / order, dtype(0.0))
        score = (1 + _CHRF_BETA_SQ) * avg_prec * avg_rec
        score = score / ((_CHRF_BETA_SQ * avg_prec) + avg_rec)
        return np.where(avg_prec + avg_rec != 0, 100 * score, dtype(0.0))


def ter_scores(sums: npt.ArrayLike) -> np.ndarray:
    """TER (in percent) of each row of summed [edits, reference length] statistics; an empty
    reference scores 100 when there are edits, else 0 (float32 sums in float32, as sacrebleu's
    paired tests)."""
    s = np.asarray(sums)
    dtype = _working_dtype(s)
    s = s.astype(dtype, copy=False).reshape(-1, TER_STATS)
    edits, ref_len = s[:, 0], s[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        empty_ref = np.where(edits > 0, dtype(1.0), dtype(0.0))
        ratio = np.where(ref_len > 0, edits / ref_len, empty_ref)
    return 100 * ratio


def bleu_from_stats(summed: npt.ArrayLike) -> float:
    """Corpus BLEU from one row of summed statistics."""
    return float(bleu_scores(np.asarray(summed)[None])[0])


def chrf_from_stats(summed: npt.ArrayLike) -> float:
    """Corpus chrF++ from one row of summed statistics."""
    return float(chrf_scores(np.asarray(summed)[None])[0])


def ter_from_stats(summed: npt.ArrayLike) -> float:
    """Corpus TER from one row of summed statistics."""
    return float(ter_scores(np.asarray(summed)[None])[0])


def ter_or_none(summed: Sequence[float | None] | None) -> float | None:
    """Corpus TER from summed statistics, None when TER was not computed (NULL sums)."""
    if summed is None or any(v is None for v in summed):
        return None
    return ter_from_stats(np.asarray(summed, dtype=np.float64))


def corpus_scores(
    bleu: Sequence[Sequence[int]], chrf: Sequence[Sequence[int]], ter: Sequence[Sequence[float]]
) -> dict[str, float]:
    """Corpus BLEU, chrF++ and TER of a set of segments from their per-segment statistics."""
    return {
        "bleu": bleu_from_stats(np.asarray(bleu, dtype=np.int64).reshape(-1, BLEU_STATS).sum(0)),
        "chrf": chrf_from_stats(np.asarray(chrf, dtype=np.int64).reshape(-1, CHRF_STATS).sum(0)),
        "ter": ter_from_stats(
            ordered_sum(np.asarray(ter, dtype=np.float64).reshape(-1, TER_STATS))
        ),
    }


def ordered_sum(rows: np.ndarray) -> np.ndarray:
    """Column sums of float statistics added in row order, as sacrebleu adds TER statistics (a
    numpy sum would add pairwise and may differ in the last bit); zeros for no rows."""
    if len(rows) == 0:
        return np.zeros(rows.shape[1] if rows.ndim == 2 else TER_STATS)
    return np.cumsum(rows, axis=0)[-1]
