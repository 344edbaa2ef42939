"""Brute-force oracle of the exposure definitions (docs/exposure.md), written for clarity.

Texts passed here are already normalised. Every training row is scored; ties go to the lower row
(then the lower reference); exact flags use string equality and override the similarity search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction


def grams(text: str, orders: Sequence[int] = (3, 4, 5)) -> frozenset[str]:
    """Set of character n-grams of every order in `orders` (code points, spaces included)."""
    if not text:
        return frozenset()
    if len(text) < min(orders):
        return frozenset([text])
    return frozenset(
        text[i : i + n] for n in set(orders) if n <= len(text) for i in range(len(text) - n + 1)
    )


def similarity(a: frozenset[str], b: frozenset[str]) -> Fraction:
    """Jaccard of two gram sets; both empty is 1, exactly one empty is 0."""
    if not a and not b:
        return Fraction(1)
    return Fraction(len(a & b), len(a | b))


def containment(a: frozenset[str], b: frozenset[str]) -> Fraction:
    """Share of the query's grams `a` that `b` holds; an empty query: 1 against empty, else 0."""
    if not a:
        return Fraction(1 if not b else 0)
    return Fraction(len(a & b), len(a))


MEASURES = {"jaccard": similarity, "containment": containment}


@dataclass(frozen=True)
class Exposure:
    """Expected exposures of one test segment."""

    source_exposure: Fraction
    source_nn: int | None
    source_exact: bool
    target_exposure: Fraction
    target_nn: int | None
    target_ref_idx: int | None
    target_exact: bool
    pair_exposure: Fraction
    pair_nn: int | None
    pair_exact: bool


class BruteForce:
    """Exposure of test segments against training pairs by scoring every row."""

    def __init__(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        orders: Sequence[int] = (3, 4, 5),
        measure: str = "jaccard",
    ) -> None:
        assert len(sources) == len(targets)
        self.measure = MEASURES[measure]
        self.orders = tuple(orders)
        self.sources = list(sources)
        self.targets = list(targets)
        self.source_grams = [grams(s, self.orders) for s in self.sources]
        self.target_grams = [grams(t, self.orders) for t in self.targets]

    def source(self, x: str) -> tuple[Fraction, int | None, bool]:
        """(exposure, nearest row, exact) of one test source."""
        if x in self.sources:
            return Fraction(1), self.sources.index(x), True
        gx = grams(x, self.orders)
        best, best_row = Fraction(0), None
        for j, gu in enumerate(self.source_grams):
            s = self.measure(gx, gu)
            if s > best:
                best, best_row = s, j
        return best, best_row, False

    def target(self, refs: Sequence[str]) -> tuple[Fraction, int | None, int | None, bool]:
        """(exposure, nearest row, reference index, exact) over all references of a segment."""
        for j, v in enumerate(self.targets):
            if v in refs:
                return Fraction(1), j, list(refs).index(v), True
        ref_grams = [grams(r, self.orders) for r in refs]
        best, best_row, best_ref = Fraction(0), None, None
        for j, gv in enumerate(self.target_grams):
            for r, gr in enumerate(ref_grams):
                s = self.measure(gr, gv)
                if s > best:
                    best, best_row, best_ref = s, j, r
        return best, best_row, best_ref, False

    def pair(self, x: str, refs: Sequence[str]) -> tuple[Fraction, int | None, bool]:
        """(exposure, nearest row, exact) of min(source, best reference) similarity."""
        for j, (u, v) in enumerate(zip(self.sources, self.targets, strict=True)):
            if u == x and v in refs:
                return Fraction(1), j, True
        gx = grams(x, self.orders)
        ref_grams = [grams(r, self.orders) for r in refs]
        best, best_row = Fraction(0), None
        for j, (gu, gv) in enumerate(zip(self.source_grams, self.target_grams, strict=True)):
            value = min(self.measure(gx, gu), max(self.measure(gr, gv) for gr in ref_grams))
            if value > best:
                best, best_row = value, j
        return best, best_row, False

    def exposure(self, x: str, refs: Sequence[str]) -> Exposure:
        """All three sides of one test segment."""
        s, s_nn, s_exact = self.source(x)
        t, t_nn, t_ref, t_exact = self.target(refs)
        p, p_nn, p_exact = self.pair(x, refs)
        return Exposure(s, s_nn, s_exact, t, t_nn, t_ref, t_exact, p, p_nn, p_exact)
