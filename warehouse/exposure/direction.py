"""Does the test set face the same way as the training corpus? A cheap character-trigram check
run before a long audit: test sources should resemble the training sources more than the
training targets (docs/exposure.md)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

SAMPLE = 2000  # lines sampled from each side
MARGIN = 0.05  # cosine similarity by which the target side must win to be reported


def sample_lines(n: int) -> range | None:
    """The lines of an `n`-line side the check looks at (None: all of them): evenly spaced, so
    a warehouse reads them with a filter on the line number alone."""
    return None if n <= SAMPLE else range(0, n, n // SAMPLE)[:SAMPLE]


def _profile(texts: Sequence[str]) -> Counter[str]:
    """Character trigram counts of a sample of the texts (lowercased); the sample's lines are
    `sample_lines(len(texts))`, so a side read at those lines gives the same counts."""
    lines = sample_lines(len(texts))
    sample = texts if lines is None else [texts[i] for i in lines]
    grams: Counter[str] = Counter()
    for text in sample:
        padded = f" {text.lower()} "
        grams.update(map("".join, zip(padded, padded[1:], padded[2:], strict=False)))
    return grams


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    """Cosine similarity of two count vectors."""
    dot = sum(count * b[gram] for gram, count in a.items() if gram in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def reversed_direction(
    test_sources: Sequence[str], train_sources: Sequence[str], train_targets: Sequence[str]
) -> str | None:
    """A warning when the test sources look like the training targets rather than the
    training sources, else None."""
    test = _profile(test_sources)
    if not test:
        return None
    like_source = _cosine(test, _profile(train_sources))
    like_target = _cosine(test, _profile(train_targets))
    if like_target > like_source + MARGIN:
        return (
            "the test set's sources look like the training corpus' target side (character "
            f"trigram similarity {like_target:.2f} to its targets vs {like_source:.2f} to its "
            "sources): is one of them registered the wrong way round?"
        )
    return None
