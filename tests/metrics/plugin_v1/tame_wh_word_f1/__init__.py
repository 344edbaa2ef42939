"""A metric plugin for the tests: word F1 of each hypothesis against its best reference (set
overlap of lowercased words), contributed through the `tame_wh.metrics` entry-point group."""

from __future__ import annotations

from collections.abc import Sequence

VERSION = "1.0"


def word_f1(hypothesis: str, reference: str) -> float:
    """F1 of the two texts' sets of lowercased words (1 when both are empty)."""
    hyp, ref = set(hypothesis.lower().split()), set(reference.lower().split())
    if not hyp and not ref:
        return 1.0
    common = len(hyp & ref)
    if common == 0:
        return 0.0
    precision, recall = common / len(hyp), common / len(ref)
    return 2 * precision * recall / (precision + recall)


class WordF1:
    """The plugin object tame-wh loads."""

    name = "word_f1"
    version = VERSION
    higher_is_better = True
    scale = 1.0
    model = None

    def score(
        self,
        sources: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
    ) -> list[float]:
        """One score per segment: the best F1 over its references."""
        return [
            max(word_f1(h, r) for r in refs) for h, refs in zip(hypotheses, references, strict=True)
        ]


class WordMiss(WordF1):
    """1 - word F1: lower is better."""

    name = "word_miss"
    higher_is_better = False

    def score(self, sources, hypotheses, references):  # type: ignore[no-untyped-def]
        """One minus the best F1."""
        return [1.0 - v for v in super().score(sources, hypotheses, references)]


class Broken(WordF1):
    """A plugin that returns one score too few."""

    name = "broken_metric"

    def score(self, sources, hypotheses, references):  # type: ignore[no-untyped-def]
        """Too few scores."""
        return super().score(sources, hypotheses, references)[:-1]
