"""Agreement between a metric and human scores (docs/human.md): Pearson, Kendall tau-b, pairwise
accuracy (Kocmi et al. 2021) and the tie-aware pairwise accuracy acc_eq with tie calibration
(Deutsch et al. 2023). Both inputs are oriented so that higher is better."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r; NaN when either side is constant or there are fewer than two items."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.size < 2:
        return float("nan")
    a, b = a - a.mean(), b - b.mean()
    denominator = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / denominator) if denominator > 0 else float("nan")


def _tied_pairs(*columns: np.ndarray) -> int:
    """Pairs equal in every column (the columns sorted together, lexicographically)."""
    n = columns[0].size
    if n < 2:
        return 0
    changes = np.zeros(n - 1, dtype=bool)
    for column in columns:
        changes |= column[1:] != column[:-1]
    runs = np.diff(np.r_[0, np.flatnonzero(changes) + 1, n])
    return int((runs * (runs - 1) // 2).sum())


def _inversions(ranks: np.ndarray) -> int:
    """Pairs i < j with ranks[i] > ranks[j] (a Fenwick tree over dense ranks)."""
    size = int(ranks.max()) + 2 if ranks.size else 1
    tree = [0] * size
    inversions = 0
    for seen, rank in enumerate(int(r) + 1 for r in ranks):
        at, not_above = rank, 0
        while at > 0:
            not_above += tree[at]
            at -= at & -at
        inversions += seen - not_above
        at = rank
        while at < size:
            tree[at] += 1
            at += at & -at
    return inversions


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b (ties corrected on both sides) in O(n log n) (Knight 1966); NaN when
    either side is constant or there are fewer than two items."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = a.size
    if n < 2:
        return float("nan")
    order = np.lexsort((b, a))  # by x, then y: pairs tied in x are never inversions
    a_sorted, b_sorted = a[order], b[order]
    _values, y_ranks = np.unique(b_sorted, return_inverse=True)
    pairs = n * (n - 1) // 2
    tied_x, tied_both = _tied_pairs(a_sorted), _tied_pairs(a_sorted, b_sorted)
    tied_y = _tied_pairs(np.sort(b))
    difference = pairs - tied_x - tied_y + tied_both - 2 * _inversions(y_ranks)
    denominator = np.sqrt(float(pairs - tied_x) * float(pairs - tied_y))
    return float(difference / denominator) if denominator > 0 else float("nan")


def pairwise_accuracy(
    metric: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray
) -> float:
    """Share of item pairs that the metric orders as the humans do (Kocmi et al. 2021: a pair
    counts when the signs of the two differences are equal, ties included)."""
    m, h = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    n = m.size
    if n < 2:
        return float("nan")
    i, j = np.triu_indices(n, k=1)
    return float((np.sign(m[i] - m[j]) == np.sign(h[i] - h[j])).mean())


def _pair_signs(rows: np.ndarray) -> np.ndarray:
    """sign(row[i] - row[j]) over every pair i < j of each row's items (rows by pairs)."""
    i, j = np.triu_indices(rows.shape[1], k=1)
    return np.sign(rows[:, i] - rows[:, j])


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`pearson` of each row of x with the same row of y (rows: samples, columns: items)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape[1] < 2:
        return np.full(a.shape[0], np.nan)
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    denominator = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (a * b).sum(axis=1) / denominator, np.nan)


def kendall_tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`kendall_tau_b` of each row of x with the same row of y, from every pair's signs (for the
    few items of a system-level comparison)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape[1] < 2:
        return np.full(a.shape[0], np.nan)
    sa, sb = _pair_signs(a), _pair_signs(b)
    pairs = sa.shape[1]
    difference = (sa * sb).sum(axis=1)  # concordant - discordant; ties add 0
    tied_x, tied_y = (sa == 0).sum(axis=1), (sb == 0).sum(axis=1)
    denominator = np.sqrt((pairs - tied_x).astype(np.float64) * (pairs - tied_y))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, difference / denominator, np.nan)


def pairwise_accuracy_rows(metric: np.ndarray, human: np.ndarray) -> np.ndarray:
    """`pairwise_accuracy` of each row of `metric` against the same row of `human`."""
    m, h = np.asarray(metric, dtype=np.float64), np.asarray(human, dtype=np.float64)
    if m.shape[1] < 2:
        return np.full(m.shape[0], np.nan)
    return (_pair_signs(m) == _pair_signs(h)).mean(axis=1)


def _grouped_pairs(
    metric: np.ndarray, human: np.ndarray, groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """|metric difference| and sign of the human difference over all pairs within each group."""
    dm, dh = [], []
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    for members in np.split(order, bounds):
        if members.size < 2:
            continue
        i, j = np.triu_indices(members.size, k=1)
        a, b = members[i], members[j]
        dm.append(metric[a] - metric[b])
        dh.append(np.sign(human[a] - human[b]))
    if not dm:
        return np.empty(0), np.empty(0)
    return np.concatenate(dm), np.concatenate(dh)


def acc_eq(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
    epsilon: float = 0.0,
) -> float:
    """acc_eq over the pairs within each group: a pair is right when both sides order it the
    same way or both call it a tie; the metric calls a tie when its difference is at most
    `epsilon`."""
    dm, dh = _grouped_pairs(
        np.asarray(metric, dtype=np.float64),
        np.asarray(human, dtype=np.float64),
        np.asarray(groups),
    )
    if dm.size == 0:
        return float("nan")
    sm = np.where(np.abs(dm) <= epsilon, 0.0, np.sign(dm))
    return float((sm == dh).mean())


def tie_calibrated_acc_eq(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
) -> tuple[float, float]:
    """The best acc_eq over every tie threshold epsilon (acc*_eq), and that epsilon (the
    smallest one attaining it). Sweeping epsilon up through the sorted |metric differences|,
    a pair turning into a metric tie gains 1 when humans tie it, loses 1 when it was right."""
    dm, dh = _grouped_pairs(
        np.asarray(metric, dtype=np.float64),
        np.asarray(human, dtype=np.float64),
        np.asarray(groups),
    )
    if dm.size == 0:
        return float("nan"), 0.0
    size = np.abs(dm)
    right = (np.sign(dm) == dh).astype(np.int64)  # at epsilon below every |difference|
    order = np.argsort(size, kind="stable")
    size, right, human_tie = size[order], right[order], (dh[order] == 0).astype(np.int64)
    start = int(right.sum())
    gain = np.cumsum(human_tie - right)  # after making pairs 0..k metric ties
    last_of_value = np.r_[size[1:] != size[:-1], True]  # thresholds fall between values
    candidates = np.r_[0, gain[last_of_value]]
    thresholds = np.r_[-1.0, size[last_of_value]]
    best = int(np.argmax(candidates))  # first maximum: the smallest epsilon
    epsilon = max(0.0, float(thresholds[best]))
    return float((start + candidates[best]) / size.size), epsilon


def tie_shares(
    metric: Sequence[float] | np.ndarray,
    human: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
    epsilon: float,
) -> tuple[float, float]:
    """Of the pairs within each group: the share the metric calls ties at `epsilon`, and the
    share humans tie (NaN without pairs)."""
    dm, dh = _grouped_pairs(
        np.asarray(metric, dtype=np.float64),
        np.asarray(human, dtype=np.float64),
        np.asarray(groups),
    )
    if dm.size == 0:
        return float("nan"), float("nan")
    return float((np.abs(dm) <= epsilon).mean()), float((dh == 0).mean())
