"""Checks for wrong-but-plausible input: each returns warnings (stored with the run and shown by
`report`), never an error. Thresholds are named constants; docs/inputs.md lists the checks."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from warehouse.inputs.runcard import RunDocument
from warehouse.native import native

UNTRANSLATED_SHARE = 0.25  # warn when this share of hypotheses repeat their source
TOKENIZED_PERIODS = 100  # sacrebleu's own hint threshold
SHIFT_SAMPLE = 400  # segments sampled to look for an alignment offset
SHIFT_OFFSETS = (-2, -1, 1, 2)
SHIFT_MARGIN = 10.0  # chrF++ points a shifted alignment must win by
CLAIM_TOLERANCE = 0.5  # points on the 0-100 scale (0.005 on 0-1) a claimed score may be off
EMPTY_SHARE = 0.10  # warn when at least this share of the evaluated hypotheses is empty
REFERENCE_SHARE = 0.90  # ... when this share equals a reference word for word
UNRELATED_MARGIN = 3.0  # chrF++ points the own references must beat other segments' by
LOCAL_BLOCK = 24  # consecutive segments a local shift is looked for in
LOCAL_BLOCKS = 200  # blocks examined at most (sampled, seeded, on longer runs)
LOCAL_OFFSETS = (-1, 1)  # a line lost in one place and one added in another


def empty_hypotheses(hyps: Sequence[str], errors: Sequence[str | None]) -> list[str]:
    """Every evaluated hypothesis is empty."""
    evaluated = [h for h, e in zip(hyps, errors, strict=True) if e is None]
    if evaluated and all(not h.strip() for h in evaluated):
        return [f"all {len(evaluated)} hypotheses are empty: was the right file given?"]
    return []


def some_empty(hyps: Sequence[str], errors: Sequence[str | None]) -> list[str]:
    """A large share of the evaluated hypotheses is empty (but not all: `empty_hypotheses`)."""
    evaluated = [h for h, e in zip(hyps, errors, strict=True) if e is None]
    empty = sum(1 for h in evaluated if not h.strip())
    if evaluated and EMPTY_SHARE * len(evaluated) <= empty < len(evaluated):
        return [
            f"{empty} of {len(evaluated)} hypotheses ({empty / len(evaluated):.0%}) are empty: "
            "failed requests stored as empty text? (they are scored as empty translations)"
        ]
    return []


def equal_to_references(
    hyps: Sequence[str], refs: Sequence[Sequence[str]], errors: Sequence[str | None]
) -> list[str]:
    """Nearly every hypothesis is one of its references word for word (the references given as
    hypotheses)."""
    evaluated = same = 0
    for hyp, options, error in zip(hyps, refs, errors, strict=True):
        if error is None and (text := " ".join(hyp.split())):
            evaluated += 1
            same += any(text == " ".join(r.split()) for r in options)
    if evaluated >= 10 and same >= REFERENCE_SHARE * evaluated:
        return [
            f"{same} of {evaluated} hypotheses equal a reference word for word: were the "
            "references given as the hypotheses?"
        ]
    return []


@dataclass(frozen=True)
class AlignmentSample:
    """The segments the alignment checks look at (up to 400 non-empty evaluated ones, seeded)
    and the mean sentence chrF++ of their hypotheses against their own references."""

    rows: list[int]
    aligned: float


def alignment_sample(
    hyps: Sequence[str], refs: Sequence[Sequence[str]], errors: Sequence[str | None]
) -> AlignmentSample | None:
    """The sample `shifted_lines` and `unrelated_to_references` share (None: under 20
    usable segments, too few to tell)."""
    usable = [i for i in range(len(hyps)) if errors[i] is None and hyps[i].strip()]
    if len(usable) < 20:
        return None
    rows = sorted(random.Random(12345).sample(usable, min(SHIFT_SAMPLE, len(usable))))
    return AlignmentSample(rows, _mean_chrf([hyps[i] for i in rows], [refs[i] for i in rows]))


def unrelated_to_references(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    errors: Sequence[str | None],
    sample: AlignmentSample | None = None,
) -> list[str]:
    """Hypotheses that match their own references no better than other segments' references:
    the output for another test set (however weak a system, its output matches its own
    references better than unrelated ones). `sample`: `alignment_sample`'s, when computed."""
    sample = sample or alignment_sample(hyps, refs, errors)
    if sample is None:
        return []
    n, own = len(hyps), sample.aligned
    # Each sampled hypothesis against the reference of a segment half the test set away.
    others = _mean_chrf(
        [hyps[i] for i in sample.rows], [refs[(i + n // 2) % n] for i in sample.rows]
    )
    if own < others + UNRELATED_MARGIN:
        return [
            f"the hypotheses match their own references no better than other segments' (mean "
            f"sentence chrF++ {own:.1f} vs {others:.1f}): are they the output for another test "
            "set?"
        ]
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


def far_below_tm(bins: Sequence[tuple[str, float | None, float | None]], ratio: float) -> list[str]:
    """The run's chrF++ is below `ratio` of the translation-memory baseline's on its test set
    (per audit: training corpus, system chrF++, TM chrF++): copying the nearest training target
    would do far better, which real systems rarely allow."""
    return [
        f"chrF++ {chrf:.2f} is below {ratio:.0%} of the TM baseline's {tm:.2f} (training corpus "
        f"{train}): misaligned, wrong-language or truncated output?"
        for train, chrf, tm in bins
        if chrf is not None and tm is not None and tm > 0 and chrf < ratio * tm
    ]


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
    return float(np.mean(_sentence_chrf(hyps, refs)))


def shifted_lines(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    errors: Sequence[str | None],
    sample: AlignmentSample | None = None,
) -> list[str]:
    """Hypotheses that match the references a few lines away better than their own: a file
    shifted against the test set (a line added or lost). `sample`: `alignment_sample`'s, when
    computed."""
    sample = sample or alignment_sample(hyps, refs, errors)
    if sample is None:
        return []
    n = len(hyps)

    def score(offset: int) -> float:
        pairs = [(i, i + offset) for i in sample.rows if 0 <= i + offset < n]
        return _mean_chrf([hyps[i] for i, _ in pairs], [refs[j] for _, j in pairs])

    aligned = sample.aligned
    best_offset, best = max(((k, score(k)) for k in SHIFT_OFFSETS), key=lambda kv: kv[1])
    if best >= aligned + SHIFT_MARGIN:
        return [
            f"hypotheses look shifted by {best_offset:+d} line(s) against the test set: mean "
            f"sentence chrF++ {best:.1f} at that offset vs {aligned:.1f} as aligned"
        ]
    return []


def _blocks(n: int) -> list[range]:
    """The blocks of consecutive segments a local shift is looked for in: all of them, or a
    seeded sample on long runs."""
    blocks = [range(start, min(start + LOCAL_BLOCK, n)) for start in range(0, n, LOCAL_BLOCK)]
    blocks = [b for b in blocks if len(b) == LOCAL_BLOCK]
    if len(blocks) > LOCAL_BLOCKS:
        blocks = sorted(random.Random(12345).sample(blocks, LOCAL_BLOCKS), key=lambda b: b.start)
    return blocks


def locally_shifted(
    hyps: Sequence[str], refs: Sequence[Sequence[str]], errors: Sequence[str | None]
) -> list[str]:
    """A stretch of hypotheses that matches the references a few lines away better than its
    own, while the file as a whole is aligned: a line lost in one place and one added in
    another (the line counts still agree)."""
    n = len(hyps)
    blocks = _blocks(n)
    if not blocks:
        return []
    rows = [i for b in blocks for i in b]
    offsets = (0, *LOCAL_OFFSETS)
    by_offset: dict[int, np.ndarray] = {}
    for k in offsets:
        pairs = [(i, i + k) for i in rows if 0 <= i + k < n and errors[i] is None]
        scores = np.full(n, np.nan)
        if pairs:
            scores[[i for i, _ in pairs]] = _sentence_chrf(
                [hyps[i] for i, _ in pairs], [refs[j] for _, j in pairs]
            )
        by_offset[k] = scores
    flagged: list[tuple[range, int, float, float]] = []
    for block in blocks:
        index = list(block)
        aligned = by_offset[0][index]
        if np.isnan(aligned).all():
            continue
        base = float(np.nanmean(aligned))
        for k in LOCAL_OFFSETS:
            shifted = by_offset[k][index]
            if np.isnan(shifted).sum() > len(index) // 2:
                continue
            mean = float(np.nanmean(shifted))
            if mean >= base + SHIFT_MARGIN:
                flagged.append((block, k, mean, base))
                break
    if not flagged or len(flagged) == len(blocks):  # none, or the whole file (shifted_lines)
        return []
    block, k, mean, base = flagged[0]
    return [
        f"hypotheses {block.start + 1}-{block.stop} (and {len(flagged) - 1} more stretch(es) "
        f"of {LOCAL_BLOCK}) look shifted by {k:+d} line(s) against the test set: mean sentence "
        f"chrF++ {mean:.1f} at that offset vs {base:.1f} as aligned; a line lost and one added?"
        if len(flagged) > 1
        else f"hypotheses {block.start + 1}-{block.stop} look shifted by {k:+d} line(s) against "
        f"the test set: mean sentence chrF++ {mean:.1f} at that offset vs {base:.1f} as "
        "aligned; a line lost and one added?"
    ]


def _sentence_chrf(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> np.ndarray:
    """Sentence chrF++ of each hypothesis/reference pair."""
    _bleu, _chrf, sentence = native.surface_stats(list(hyps), [list(r) for r in refs])
    return np.asarray(sentence, dtype=np.float64)


def claimed_scores_differ(
    document: RunDocument,
    computed: Mapping[str, float | None],
    signatures: Mapping[str, str] | None = None,
) -> list[str]:
    """Scores a run card claims that differ from the ones computed from the text (each named
    with the signature it was computed under)."""
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
            signature = (signatures or {}).get(ours)
            under = f" ({ours} {signature})" if signature else ""
            out.append(f"the run card says {claim_name} = {value:g}, computed {mine:.2f}{under}")
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
