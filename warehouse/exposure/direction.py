"""Does the test set face the same way as the training corpus? A cheap character-trigram check
run before a long audit: test sources should resemble the training sources more than the
training targets (docs/exposure.md)."""

from __future__ import annotations

from collections.abc import Sequence

from warehouse.native import native

SAMPLE = 2000  # lines sampled from each side
MARGIN = 0.05  # cosine similarity by which the target side must win to be reported


def sample_lines(n: int) -> range | None:
    """The lines of an `n`-line side the check looks at (None: all of them): evenly spaced, so
    a warehouse reads them with a filter on the line number alone."""
    return None if n <= SAMPLE else range(0, n, n // SAMPLE)[:SAMPLE]


def _sample(texts: Sequence[str]) -> list[str]:
    """The lowercased texts at `sample_lines(len(texts))`, so a side read at those lines gives
    the same sample."""
    lines = sample_lines(len(texts))
    sample = texts if lines is None else [texts[i] for i in lines]
    return [text.lower() for text in sample]


def side_similarities(
    test_sources: Sequence[str], train_sources: Sequence[str], train_targets: Sequence[str]
) -> tuple[float, float]:
    """Cosine similarity of the test sources' character-trigram profile (counts of the trigrams
    of each lowercased text padded with a space on each side) to the training sources' and to
    the training targets'."""
    return native.side_similarities(
        _sample(test_sources), _sample(train_sources), _sample(train_targets)
    )


def reversed_direction(
    test_sources: Sequence[str], train_sources: Sequence[str], train_targets: Sequence[str]
) -> str | None:
    """A warning when the test sources look like the training targets rather than the
    training sources, else None."""
    like_source, like_target = side_similarities(test_sources, train_sources, train_targets)
    if like_target > like_source + MARGIN:
        return (
            "the test set's sources look like the training corpus' target side (character "
            f"trigram similarity {like_target:.2f} to its targets vs {like_source:.2f} to its "
            "sources): is one of them registered the wrong way round?"
        )
    return None
