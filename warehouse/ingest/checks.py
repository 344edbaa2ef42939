"""Checks for wrong-but-plausible input: each returns warnings (stored with the run and shown by
`report`), never an error. Thresholds are named constants; docs/inputs.md lists the checks."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import numpy as np

from warehouse.inputs.runcard import RunDocument
from warehouse.native import native

UNTRANSLATED_SHARE = 0.25  # warn when this share of hypotheses repeat their source
TOKENIZED_PERIODS = 100  # sacrebleu's own hint threshold
SHIFT_SAMPLE = 400  # segments sampled to look for an alignment offset
SHIFT_OFFSETS = (-2, -1, 1, 2)
SHIFT_MARGIN = 10.0  # chrF++ points a shifted alignment must win by
CLAIM_TOLERANCE = 0.5  # points on the 0-100 scale (0.005 on 0-1) a claimed score may be off


def empty_hypotheses(hyps: Sequence[str], errors: Sequence[str | None]) -> list[str]:
    """Every evaluated hypothesis is empty."""
    evaluated = [h for h, e in zip(hyps, errors, strict=True) if e is None]
    if evaluated and all(not h.strip() for h in evaluated):
        return [f"all {len(evaluated)} hypotheses are empty: was the right file given?"]
    return []


def untranslated(
    hyps: Sequence[str], sources: Sequence[str], errors: Sequence[str | None]
) -> list[str]:
    """Many hypotheses are their source unchanged (the system copied instead of translating)."""
    evaluated = same = 0
    for hyp, source, error in zip(hyps, sources, errors, strict=True):
        if error is None and (text := hyp.strip()):
            evaluated += 1
            same += text == source.strip()
    if evaluated and same >= UNTRANSLATED_SHARE * evaluated:
        return [f"{same} of {evaluated} hypotheses equal their source text: untranslated output?"]
    return []


def tokenized_periods(hyps: Sequence[str]) -> list[str]:
    """sacrebleu's hint that hypotheses look tokenized."""
    count = sum(1 for h in hyps if h.endswith(" ."))
    if count >= TOKENIZED_PERIODS:
        return [
            f"{count} hypotheses end in ' .' — are they tokenized? BLEU expects detokenized text"
        ]
    return []


def partial_run_card(n_entries: int, n_segments: int, file: str) -> list[str]:
    """A run card whose per-entry results cover only part of the test set."""
    if 0 < n_entries < n_segments:
        return [
            f"{file}: per-entry results cover {n_entries} of {n_segments} segments; latency "
            f"and per-entry metrics are based on those {n_entries}, totals and cost on the run "
            "card as given"
        ]
    return []


def _mean_chrf(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> float:
    """Mean sentence chrF++ of hypothesis/reference pairs."""
    if not hyps:
        return 0.0
    _bleu, _chrf, sentence = native.surface_stats(list(hyps), [list(r) for r in refs])
    return float(np.mean(np.asarray(sentence, dtype=np.float64)))


def shifted_lines(
    hyps: Sequence[str], refs: Sequence[Sequence[str]], errors: Sequence[str | None]
) -> list[str]:
    """Hypotheses that match the references a few lines away better than their own: a file
    shifted against the test set (a line added or lost)."""
    n = len(hyps)
    usable = [i for i in range(n) if errors[i] is None and hyps[i].strip()]
    if len(usable) < 20:
        return []
    sample = sorted(random.Random(12345).sample(usable, min(SHIFT_SAMPLE, len(usable))))

    def score(offset: int) -> float:
        pairs = [(i, i + offset) for i in sample if 0 <= i + offset < n]
        return _mean_chrf([hyps[i] for i, _ in pairs], [refs[j] for _, j in pairs])

    aligned = score(0)
    best_offset, best = max(((k, score(k)) for k in SHIFT_OFFSETS), key=lambda kv: kv[1])
    if best >= aligned + SHIFT_MARGIN:
        return [
            f"hypotheses look shifted by {best_offset:+d} line(s) against the test set: mean "
            f"sentence chrF++ {best:.1f} at that offset vs {aligned:.1f} as aligned"
        ]
    return []


def claimed_scores_differ(document: RunDocument, computed: Mapping[str, float | None]) -> list[str]:
    """Scores a run card claims that differ from the ones computed from the text."""
    claimed = document.doc.get("scores")
    if not isinstance(claimed, dict):
        return []
    names = {"bleu": "bleu", "chrf_plus_plus": "chrf", "chrf": "chrf", "ter": "ter"}
    out: list[str] = []
    for claim_name, ours in names.items():
        value, mine = claimed.get(claim_name), computed.get(ours)
        if not isinstance(value, (int, float)) or not _is_number(value) or mine is None:
            continue
        # A claim on the 0-1 scale is compared as a percentage.
        candidates = (float(value), float(value) * 100)
        if all(abs(c - mine) > CLAIM_TOLERANCE for c in candidates):
            out.append(f"the run card says {claim_name} = {value:g}, computed {mine:.2f}")
    rate, mine_rate = claimed.get("exact_match_rate"), computed.get("exact_match_rate")
    if (
        isinstance(rate, (int, float))
        and _is_number(rate)
        and mine_rate is not None
        and abs(float(rate) - mine_rate) > 0.005
    ):
        out.append(f"the run card says exact_match_rate = {rate:g}, computed {mine_rate:.4f}")
    return out


def _is_number(value: object) -> bool:
    """A finite int or float (not a bool)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )
