"""Corpus scores from summed per-segment statistics equal sacrebleu's corpus_score exactly."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF, TER

from warehouse.surface import compute_segment_stats, corpus_scores, signatures

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


def test_signatures_name_reference_count_and_settings():
    sig = signatures(2)
    assert sig["bleu"].startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6")
    assert "nc:6|nw:2" in sig["chrf"]
    assert sig["ter"].startswith("nrefs:2|case:lc|tok:tercom")
