"""Native TER statistics equal sacrebleu 2.6's `TER()` statistics, float for float."""

from __future__ import annotations

import random

import pytest
import sacrebleu.metrics.lib_ter as lib_ter
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER

from warehouse.metrics.surface import compute_segment_stats
from warehouse.native import native

SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]


def _streams(refs):
    """Per-segment reference lists → sacrebleu's reference streams (None where one is short)."""
    width = max(len(r) for r in refs)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def _sacrebleu(hyps, refs):
    """sacrebleu's own per-segment TER statistics (the oracle), as floats."""
    stats = TER()._extract_corpus_statistics(hyps, _streams(refs))
    return [[float(v) for v in s] for s in stats]


# Words that stress sacrebleu's preprocessing: Python's `str.lower` special cases (İ → i̇, final
# sigma and its case-ignorable context, ẞ, Kelvin and Ohm signs, titlecase digraphs, ligatures),
# combining marks, punctuation that TER's default settings keep inside words, entities it does not
# decode, and near-duplicates that are equal only after lowercasing.
_WORDS = [
    *["a", "A", "b", "B", "the", "The", "THE", "x"],
    *["İ", "i̇", "i", "I", "ı", "ß", "SS", "ss", "ẞ", "K", "k", "Ω", "ω", "ǅ", "ǆ", "ﬁ"],  # noqa: RUF001
    *["ΟΔΟΣ", "οδος", "οδοσ", "Σ", "ς", "σ", "ΑΣ\u0301", "ΑΣ'Α", "Σ.", "aΣ"],  # noqa: RUF001
    *["e\u0301", "é", "\u0301", "a\u0345", "\u0345Σ"],
    *[".", ",", "!", "a.", "'s", "&amp;", "&quot;", "-", "3.5", "(x)", "漢", "字"],
]
_SEPARATORS = st.sampled_from([" ", " ", " ", *SPACES, "  ", "\r\n"])


@st.composite
def _hostile(draw, max_words=18):
    """A segment of hostile words joined by arbitrary Python whitespace, or any text at all."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.text(max_size=16))
    words = draw(st.lists(st.sampled_from(_WORDS), max_size=max_words))
    out = draw(st.sampled_from(["", " ", "\t", "\u3000"]))
    for w in words:
        out += w + draw(_SEPARATORS)
    return out


_ROWS = st.lists(
    st.tuples(_hostile(), st.lists(_hostile(), min_size=1, max_size=3)),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(_ROWS)
def test_property_native_ter_equals_sacrebleu_on_hostile_text(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs)


@st.composite
def _repetitive(draw):
    """A long segment over two or three words: many equal runs, many shift candidates."""
    vocab = draw(st.sampled_from([["a", "b"], ["a", "b", "C"], ["a", "A", "b"]]))
    n = draw(st.integers(0, 40))
    return " ".join(draw(st.lists(st.sampled_from(vocab), min_size=n, max_size=n)))


@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.tuples(_repetitive(), st.lists(_repetitive(), min_size=1, max_size=3)),
        max_size=3,
        min_size=1,
    )
)
def test_property_native_ter_equals_sacrebleu_with_many_shift_candidates(rows):
    hyps = [h for h, _ in rows]
    refs = [r for _, r in rows]
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs)


def test_known_segments():
    hyps = ["a b c", "a x c", "c a b", "", "a b", "A B C", "a b", ""]
    refs = [["a b c"], ["a b c"], ["a b c"], ["a b c"], [""], ["a b c"], ["a b c d", "a b", "x"]]
    refs.append(["", " "])
    expected = [
        [0.0, 3.0],  # identical
        [1.0, 3.0],  # one substitution
        [1.0, 3.0],  # one shift
        [3.0, 3.0],  # empty hypothesis: every reference word inserted
        [2.0, 0.0],  # empty reference: every hypothesis word deleted
        [0.0, 3.0],  # lowercased
        [0.0, 7 / 3],  # fewest edits over the references, average length
        [0.0, 0.0],
    ]
    assert native.ter_stats(hyps, refs) == expected == _sacrebleu(hyps, refs)


def test_unicode_lowercasing_follows_python():
    # İ lowers to two code points; a final capital sigma lowers to ς, but not before an apostrophe
    # and a letter (case-ignorable, then cased); ß has no one-letter capital.
    hyps = ["İstanbul ΟΔΟΣ ΟΔΟΣ's", "STRASSE Straße", "ΣΑΣ Σ"]
    refs = [["i̇stanbul οδοσ οδοσ's"], ["strasse straße"], ["σας σ"]]  # noqa: RUF001
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs) == [[1, 3], [0, 2], [0, 2]]


def test_every_python_whitespace_character_separates_words():
    hyps = [f"a{c}b{c}c{c}" for c in SPACES]
    refs = [[f"{c}c b{c}{c}a"] for c in SPACES]
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs)
    assert {tuple(s) for s in native.ter_stats(hyps, refs)} == {(2.0, 3.0)}


def test_ragged_and_none_references_are_skipped_as_sacrebleu_skips_them():
    hyps = ["a b c", "b a", "c"]
    refs = [["a b c", "a b", "x y z w"], ["a b"], ["c d", "c"]]
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs)
    # A None inside a segment's list is dropped like a None in a sacrebleu stream.
    with_none = [["a b c", None, "a b", "x y z w"], [None, "a b"], ["c d", "c", None]]
    assert native.ter_stats(hyps, with_none) == native.ter_stats(hyps, refs)
    streams = [["a b c", None, "c d"], ["a b", "a b", "c"], ["x y z w", None, None]]
    oracle = [[float(v) for v in s] for s in TER()._extract_corpus_statistics(hyps, streams)]
    assert native.ter_stats(hyps, refs) == oracle


def test_the_candidate_limit_is_the_same_as_sacrebleus(monkeypatch):
    """Segments where sacrebleu stops its shift search at 1000 candidates (and drops that round's
    best shift) give the same statistics."""
    checked: list[int] = []
    shift = lib_ter._shift

    def counting(*args):
        out = shift(*args)
        checked.append(out[2])
        return out

    monkeypatch.setattr(lib_ter, "_shift", counting)
    rng = random.Random(5)
    hyps, refs = [], []
    for _ in range(3):
        hyps.append(" ".join(rng.choice("abc") for _ in range(rng.randint(40, 60))))
        refs.append([" ".join(rng.choice("abc") for _ in range(rng.randint(40, 60)))])
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs)
    assert max(checked) >= lib_ter._MAX_SHIFT_CANDIDATES


def test_long_and_lopsided_segments():
    rng = random.Random(11)
    vocab = [f"w{k}" for k in range(40)] + ["the", "a", ","] * 5
    hyps, refs = [], []
    for _ in range(2):
        ref = [rng.choice(vocab) for _ in range(rng.randint(60, 90))]
        hyp = ref[:]
        rng.shuffle(hyp)
        hyps.append(" ".join(hyp))
        refs.append([" ".join(ref)])
    # length ratios beyond 50 widen sacrebleu's beam; words far apart exceed the shift distance
    hyps += ["a b", " ".join(["a"] * 150), "w1 " * 80]
    refs += [[" ".join(rng.choice("ab") for _ in range(160))], ["a b"], ["w2 w1 " * 40]]
    assert native.ter_stats(hyps, refs) == _sacrebleu(hyps, refs)


def test_compute_segment_stats_uses_the_native_statistics():
    hyps = ["The cat sat .", "", "x y"]
    refs = [["the cat sat on the mat .", "A cat"], ["a"], ["x", "y x", "z"]]
    stats = compute_segment_stats(hyps, refs, [False, False, True])
    assert stats.ter == _sacrebleu(hyps, refs)
    assert all(type(v) is float for s in stats.ter for v in s)
    assert compute_segment_stats(hyps, refs, [False] * 3, with_ter=False).ter == []


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        native.ter_stats(["a", "b"], [["a"], []])
    with pytest.raises(ValueError, match="segment 0 has no reference"):
        native.ter_stats(["a"], [[None]])
    with pytest.raises(ValueError, match="same length"):
        native.ter_stats(["a", "b"], [["a"]])
    with pytest.raises(TypeError):
        native.ter_stats("ab", [["a"], ["b"]])  # type: ignore[arg-type]
    assert native.ter_stats([], []) == []
