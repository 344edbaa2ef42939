"""Brute-force oracle of the substring lens (docs/exposure.md, "Substring lens"), written for
clarity: every document scanned for every candidate substring.

Texts passed here are already normalised; whitespace is collapsed here, as the lens does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def collapsed(text: str) -> str:
    """Whitespace runs as single spaces, none at the ends."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Lens:
    """One segment's answer."""

    chars: int
    longest: int
    start: int
    place: tuple[int, int] | None  # (document, character offset) of the first occurrence
    count: int
    grams: tuple[tuple[int, int], ...]  # per order: (found, total)


def _occurs(docs: Sequence[str], piece: str) -> bool:
    return any(piece in d for d in docs)


def lens(docs: Sequence[str], segment: str, orders: Sequence[int] = (8, 13)) -> Lens:
    """The lens of `segment` over `docs`."""
    docs = [collapsed(d) for d in docs]
    seg = collapsed(segment)
    # Longest length: whatever occurs has every shorter piece occurring too, so search it.
    lo, hi = 0, len(seg)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if any(_occurs(docs, seg[i : i + mid]) for i in range(len(seg) - mid + 1)):
            lo = mid
        else:
            hi = mid - 1
    start, place = 0, None
    if lo:
        start = next(i for i in range(len(seg) - lo + 1) if _occurs(docs, seg[i : i + lo]))
        piece = seg[start : start + lo]
        doc = next(d for d, text in enumerate(docs) if piece in text)
        place = (doc, docs[doc].index(piece))
    count = 0
    if seg:
        for d in docs:
            count += sum(d.startswith(seg, i) for i in range(len(d)))
    words = seg.split(" ") if seg else []
    doc_grams = [d.split(" ") for d in docs]
    grams = []
    for n in orders:
        total = max(len(words) - n + 1, 0)
        found = sum(
            any(
                dw[k : k + n] == words[j : j + n]
                for dw in doc_grams
                for k in range(len(dw) - n + 1)
            )
            for j in range(total)
        )
        grams.append((found, total))
    return Lens(len(seg), lo, start, place, count, tuple(grams))
