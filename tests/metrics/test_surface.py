"""Corpus scores from summed per-segment statistics equal sacrebleu's corpus_score exactly."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF, TER

from warehouse.metrics.options import MetricOptions
from warehouse.metrics.scores import corpus_scores
from warehouse.metrics.surface import (
    compute_segment_stats,
    metric_settings,
    sacrebleu_signatures,
    signatures,
)

_WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", ".", ",", "Über", "naïve", "café"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 14)))


def _sacrebleu(hyps, streams):
    return {
        "bleu": BLEU(tokenize="13a").corpus_score(hyps, streams).score,
        "chrf": CHRF(word_order=2).corpus_score(hyps, streams).score,
        "ter": TER().corpus_score(hyps, streams).score,
    }


def _ours(hyps, streams, subset=None):
    per_segment = [list(refs) for refs in zip(*streams, strict=True)]
    stats = compute_segment_stats(hyps, per_segment, [False] * len(hyps))
    idx = range(len(hyps)) if subset is None else subset
    return corpus_scores(
        [stats.bleu[i] for i in idx], [stats.chrf[i] for i in idx], [stats.ter[i] for i in idx]
    )


@pytest.mark.parametrize("n_refs", [1, 2, 3])
def test_summed_statistics_equal_sacrebleu_on_whole_corpus_and_subsets(n_refs):
    rng = random.Random(n_refs)
    n = 300
    hyps = [_sentence(rng) for _ in range(n)]
    hyps[:5] = ["", "", " ", "", "x"]  # empty hypotheses
    streams = [[_sentence(rng) for _ in range(n)] for _ in range(n_refs)]
    assert _ours(hyps, streams) == _sacrebleu(hyps, streams)
    for _ in range(5):
        subset = sorted(rng.sample(range(n), rng.randint(1, n)))
        sub_hyps = [hyps[i] for i in subset]
        sub_streams = [[s[i] for i in subset] for s in streams]
        assert _ours(hyps, streams, subset) == _sacrebleu(sub_hyps, sub_streams)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet="ab .,cé", max_size=20),
            st.lists(st.text(alphabet="ab .,cé", max_size=20), min_size=2, max_size=2),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_property_summed_statistics_equal_sacrebleu(rows):
    hyps = [h for h, _ in rows]
    streams = [[refs[k] for _, refs in rows] for k in range(2)]
    assert _ours(hyps, streams) == _sacrebleu(hyps, streams)


def _sacrebleu_stats(hyps, refs):
    """sacrebleu's own per-segment BLEU and chrF++ statistics (the oracle)."""
    width = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    bleu = BLEU(tokenize="13a")._extract_corpus_statistics(hyps, streams)
    chrf = CHRF(word_order=2)._extract_corpus_statistics(hyps, streams)
    return [[int(v) for v in s] for s in bleu], [[int(v) for v in s] for s in chrf]


# Text that stresses 13a and chrF++: every symbol class of the 13a rules, decimals and dashes
# next to digits, HTML entities, <skipped>, soft line breaks, non-ASCII whitespace Python splits
# on (including U+001C..U+001F, which Rust's `char::is_whitespace` does not know), marks.
_PIECES = [
    *"ab .,-&;<>()'\"0123456789\n\t!?/[]{}~^`@éß漢\u00a0\u2028\u3000\x1c\x1f\x85",
    *["&amp;", "&lt;", "&gt;", "&quot;", "<skipped>", "-\n", "e\u0301", "3.5", "1,000"],
]
_HOSTILE = st.lists(
    st.sampled_from(_PIECES),
    max_size=24,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            _HOSTILE, st.lists(st.one_of(_HOSTILE, st.text(max_size=12)), min_size=1, max_size=3)
        ),
        min_size=1,
        max_size=6,
    )
)
def test_native_statistics_equal_sacrebleus_on_hostile_text(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    stats = compute_segment_stats(hyps, refs, [False] * len(hyps), with_ter=False)
    bleu, chrf = _sacrebleu_stats(hyps, refs)
    assert (stats.bleu, stats.chrf) == (bleu, chrf)
    scorer = CHRF(word_order=2)
    assert stats.chrf_sentence == [scorer._compute_score_from_stats(s).score for s in chrf]


def test_native_statistics_split_on_every_python_whitespace_character():
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    hyps = [f"a{c}b.{c}x" for c in spaces]
    refs = [[f"a b{c}.x", "b"] for c in spaces]
    stats = compute_segment_stats(hyps, refs, [False] * len(hyps), with_ter=False)
    assert (stats.bleu, stats.chrf) == _sacrebleu_stats(hyps, refs)


def test_a_segment_without_references_is_an_error():
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        compute_segment_stats(["a b", "c"], [["a b"], []], [False, False], with_ter=False)


def test_sentence_chrf_equals_sacrebleu_sentence_score():
    rng = random.Random(7)
    hyps = [_sentence(rng) for _ in range(50)]
    refs = [[_sentence(rng), _sentence(rng)] for _ in range(50)]
    stats = compute_segment_stats(hyps, refs, [False] * 50)
    chrf = CHRF(word_order=2)
    assert stats.chrf_sentence == [
        chrf.sentence_score(h, r).score for h, r in zip(hyps, refs, strict=True)
    ]


def test_exact_match_strips_and_skips_errored_entries():
    stats = compute_segment_stats(
        [" a b ", "x", "", "y"], [["a b"], ["z", "x "], ["q"], ["y"]], [False, False, False, True]
    )
    assert stats.exact_match == [True, True, False, None]
    assert stats.length_ratio == [5 / 3, 1.0, 0.0, None]


@pytest.mark.parametrize("tokenize", ["13a", "intl", "char", "none", "zh"])
def test_spelled_out_signatures_equal_sacrebleus_for_every_built_in_option(tokenize):
    import sacrebleu

    for lowercase, word_order, ter, n_refs in itertools.product(
        (False, True), (0, 2), (False, True), (1, 3)
    ):
        options = MetricOptions(
            tokenize=tokenize, lowercase=lowercase, chrf_word_order=word_order, ter=ter
        )
        assert signatures(n_refs, options) == sacrebleu_signatures(n_refs, options), options
        assert metric_settings(n_refs, options)["sacrebleu"] == sacrebleu.__version__


def test_signatures_name_reference_count_and_settings():
    sig = signatures(2)
    assert sig["bleu"].startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6")
    assert "nc:6|nw:2" in sig["chrf"]
    assert sig["ter"].startswith("nrefs:2|case:lc|tok:tercom")
