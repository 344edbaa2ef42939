"""Retrieval engine against the brute-force oracle: hypothesis properties and pinned behaviours."""

from __future__ import annotations

import os
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.exposure.brute_force import BruteForce, Exposure
from warehouse import _native
from warehouse.exposure.config import (
    DEFAULT_ORDERS,
    DEFAULT_RARE_GRAMS,
    SearchSettings,
)
from warehouse.exposure.index.retrieval import (
    Exposures,
    audit,
    build_index,
    search_source,
    search_target,
)
from warehouse.exposure.normalize import NormalizationConfig, normalize, normalize_many

# Pieces chosen to stress normalisation and gram boundaries: combining marks, NFKC-sensitive
# characters (ligature, fullwidth, superscript, NBSP), curly quotes and dashes, case pairs with
# special folding, whitespace runs, and repeated patterns.
PIECES = [
    "a",
    "b",
    "ab",
    "é",
    "e\u0301",
    "\u0301",
    "ﬁ",
    "\uff21",  # FULLWIDTH A
    "²",
    "\u00a0",
    "\u2019",
    "\u201c",
    "\u2014",
    "ß",
    "İ",
    "Σ",
    " ",
    "  ",
    "\t",
    "\x1c",  # whitespace to Python's str.split, not to Rust's char::is_whitespace
    "\u2028",
    "\n",
    "x",
    "漢",
]

piece_text = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
repeated = st.builds(
    lambda p, k: p * k, st.sampled_from(["ab", "a", "abc", "ba "]), st.integers(1, 6)
)
short = st.text(alphabet="abé ", max_size=2)
texts = st.one_of(piece_text, repeated, short, st.just(""))
orders_st = st.sampled_from([(3, 4, 5), (1,), (2, 4), (2,), (1, 3), (5, 3, 3)])
configs = st.builds(NormalizationConfig, st.booleans(), st.booleans(), st.booleans())
# RETRIEVAL_EXAMPLES=5000 for a longer hunt; the default keeps the suite fast.
PROPERTY_SETTINGS = settings(
    max_examples=int(os.environ.get("RETRIEVAL_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[str], list[str], list[str], list[list[str]]]:
    """Training pairs (with duplicate rows) and test segments built partly from them."""
    pairs = draw(st.lists(st.tuples(texts, texts), min_size=1, max_size=14))
    for _ in range(draw(st.integers(0, 3))):  # duplicate training rows
        pairs.append(pairs[draw(st.integers(0, len(pairs) - 1))])
    sources = [s for s, _ in pairs]
    targets = [t for _, t in pairs]
    n = draw(st.integers(1, 6))
    queries = [draw(st.one_of(texts, st.sampled_from(sources))) for _ in range(n)]
    refs = [
        draw(st.lists(st.one_of(texts, st.sampled_from(targets)), min_size=1, max_size=3))
        for _ in range(n)
    ]
    return sources, targets, queries, refs


def expected(
    sources: list[str],
    targets: list[str],
    queries: list[str],
    refs: list[list[str]],
    orders: tuple[int, ...],
    config: NormalizationConfig,
) -> list[Exposure]:
    """The oracle's exposures of the normalised texts."""
    oracle = BruteForce(normalize_many(sources, config), normalize_many(targets, config), orders)
    return [
        oracle.exposure(normalize(q, config), normalize_many(r, config))
        for q, r in zip(queries, refs, strict=True)
    ]


def assert_matches(got: dict[str, Any], want: list[Exposure]) -> None:
    """Exposures equal to 1e-12; indices and flags identical."""
    for i, w in enumerate(want):
        for side in ("source", "target", "pair"):
            g_exp = got[f"{side}_exposure"][i]
            assert g_exp == pytest.approx(float(getattr(w, f"{side}_exposure")), abs=1e-12), (
                side,
                i,
            )
            assert got[f"{side}_nn"][i] == getattr(w, f"{side}_nn"), (side, i)
            assert got[f"{side}_exact"][i] == getattr(w, f"{side}_exact"), (side, i)
        assert got["target_ref_idx"][i] == w.target_ref_idx, i


@PROPERTY_SETTINGS
@given(corpora(), orders_st, configs, st.sampled_from([None, 1, 2]))
def test_exact_audit_equals_brute_force(data, orders, config, dense_min_df):
    # dense_min_df: grams as postings only (the default for so few rows), all as row bitmaps
    # (every search counts every row), or mixed.
    sources, targets, queries, refs = data
    index = build_index(sources, targets, orders, config, dense_min_df=dense_min_df)
    got = audit(index, queries, refs, config)
    assert_matches(got, expected(sources, targets, queries, refs, orders, config))


@PROPERTY_SETTINGS
@given(st.lists(st.one_of(texts, st.text(max_size=6)), max_size=8), configs)
def test_normalize_many_equals_normalizing_each_text(batch, config):
    assert normalize_many(batch, config) == [normalize(t, config) for t in batch]


# Lines of mostly NFKC-stable text with characters NFKC rewrites (ellipsis, fractions,
# no-break space, a ligature, full-width letters) and sequences that compose (e + combining
# acute, Hangul jamo), so a batch runs past one normalisation run and some lines need rewriting.
LINE_PIECES = ["a", "b", " ", "é", "e\u0301", "\u0301", "\u1100\u1161", "\u11a8", "\u2026"]
line_text = st.lists(
    st.sampled_from([*LINE_PIECES, "\u00bd", "\u00a0", "\ufb01", "\uff21"]),
    min_size=20,
    max_size=80,
).map("".join)


# Twelve batches of 60-200 texts, each drawn from a pool of 8-24 generated texts (drawing every
# text of a long batch is what took the time, not the check).
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(line_text, min_size=8, max_size=24),
    st.integers(60, 200),
    st.randoms(use_true_random=False),
)
def test_normalizing_a_long_batch_equals_nfkc_of_each_text(pool, size, rng):
    batch = [rng.choice(pool) for _ in range(size)]
    # The oracle is the standard library's NFKC applied text by text.
    want = [" ".join(unicodedata.normalize("NFKC", t).split()) for t in batch]
    assert normalize_many(batch) == want


def test_normalize_many_keeps_texts_with_newlines_apart():
    batch = ["a\nb", " c ", "\u2028d"]
    assert normalize_many(batch) == ["a b", "c", "d"]


@PROPERTY_SETTINGS
@given(corpora(), orders_st)
def test_single_side_searches_equal_audit(data, orders):
    sources, targets, queries, refs = data
    index = build_index(sources, targets, orders)
    full = audit(index, queries, refs)
    src = search_source(index, queries)
    tgt = search_target(index, refs)
    assert src["exposure"] == full["source_exposure"]
    assert src["nn"] == full["source_nn"]
    assert src["exact"] == full["source_exact"]
    assert tgt["exposure"] == full["target_exposure"]
    assert tgt["nn"] == full["target_nn"]
    assert tgt["ref_idx"] == full["target_ref_idx"]
    assert tgt["exact"] == full["target_exact"]


@PROPERTY_SETTINGS
@given(corpora(), orders_st, st.integers(1, 3), st.integers(1, 4))
def test_fast_mode_is_valid(data, orders, rare_grams, shortlist):
    sources, targets, queries, refs = data
    index = build_index(sources, targets, orders)
    exact = audit(index, queries, refs)
    fast = audit(index, queries, refs, search=SearchSettings("fast", rare_grams, shortlist))
    for side in ("source", "target", "pair"):
        assert fast[f"{side}_exact"] == exact[f"{side}_exact"]
        for f, e in zip(fast[f"{side}_exposure"], exact[f"{side}_exposure"], strict=True):
            assert f <= e + 1e-12
        for i, flag in enumerate(exact[f"{side}_exact"]):
            if flag:
                assert fast[f"{side}_nn"][i] == exact[f"{side}_nn"][i]
                assert fast[f"{side}_exposure"][i] == 1.0


RetrievalIndex = _native.RetrievalIndex
ORDERS = list(DEFAULT_ORDERS)
# The binding has no defaults: every call passes the search settings.
EXACT: dict[str, Any] = {"search": SearchSettings()}


def index_of(sources, targets, orders=DEFAULT_ORDERS) -> Any:
    """The binding's index of already-normalised texts."""
    return RetrievalIndex(sources, targets, list(orders))


def native_audit(index, queries, refs, **options) -> dict[str, Any]:
    """The binding's audit (exact unless `options` say otherwise), its buffers as lists."""
    return Exposures.of_audit(index.audit(queries, refs, **{**EXACT, **options})).to_pydict()


def native_source(index, queries, **options) -> dict[str, Any]:
    """The binding's source search, its buffers as lists."""
    raw = index.search_source(queries, **{**EXACT, **options})
    return Exposures.of_source_search(raw).to_pydict()


def run(sources, targets, queries, refs, orders=DEFAULT_ORDERS) -> dict[str, Any]:
    """Native exact audit of already-normalised texts."""
    return native_audit(index_of(sources, targets, orders), queries, refs)


def test_exact_flag_beats_lower_index_with_jaccard_one():
    # "abababa" has the same 3/4/5-gram set as "ababab" but is not equal to it
    got = run(["abababa", "ababab"], ["x", "y"], ["ababab", "abababab"], [["y"], ["q"]])
    assert (got["source_exposure"][0], got["source_nn"][0], got["source_exact"][0]) == (1, 1, True)
    assert (got["source_exposure"][1], got["source_nn"][1], got["source_exact"][1]) == (1, 0, False)


def test_target_exact_uses_lowest_equal_row_then_lowest_equal_reference():
    # row 0 matches reference 0 with Jaccard 1 only; row 1 equals reference 1 and reference 2
    got = run(["s", "t"], ["abababa", "zzz"], ["q"], [["ababab", "zzz", "zzz"]])
    assert got["target_exact"] == [True]
    assert got["target_nn"] == [1]
    assert got["target_ref_idx"] == [1]
    assert got["target_exposure"] == [1.0]


def test_unseen_query_grams_count_in_union():
    # query grams: abc bcd cdx abcd bcdx abcdx (6); shared with "abcd": abc bcd abcd (3)
    got = native_source(index_of(["abcd"], ["t"]), ["abcdx"])
    assert got["exposure"] == [0.5]
    assert got["nn"] == [0]


def test_no_shared_gram_gives_zero_and_none():
    got = run(["abcdef"], ["uvwxyz"], ["zzzz", ""], [["qqqq"], ["uvwxyz"]])
    for side in ("source", "pair"):
        assert got[f"{side}_exposure"] == [0.0, 0.0]
        assert got[f"{side}_nn"] == [None, None]
    assert got["target_nn"] == [None, 0]
    assert got["target_ref_idx"] == [None, 0]


def test_empty_query_matches_empty_training_row():
    got = run(["abc", "", ""], ["x", "", "y"], ["", ""], [["y"], [""]])
    assert got["source_exposure"] == [1.0, 1.0]
    assert got["source_nn"] == [1, 1]
    assert got["source_exact"] == [True, True]
    # pair: ("", "y") is row 2; ("", "") is row 1
    assert got["pair_nn"] == [2, 1]
    assert got["pair_exact"] == [True, True]


def test_empty_query_pair_uses_empty_source_rows():
    # x is empty: only rows with an empty source count, by their target similarity
    got = run(["", "abc", ""], ["el gato", "el gatos", "el gata"], [""], [["el gatos"]])
    assert got["pair_exact"] == [False]
    assert got["pair_nn"] == [0]
    assert got["pair_exposure"][0] == pytest.approx(12 / 15)  # "el gato" vs "el gatos"


def test_short_string_is_a_single_gram():
    got = native_source(index_of(["ab", "abc", "xab"], ["t", "t", "t"]), ["ab", "ab!"])
    assert (got["nn"][0], got["exact"][0]) == (0, True)
    # "ab!" has grams {"ab!"}; "ab" is the single gram "ab", unrelated
    assert got["nn"][1] is None


def test_ties_go_to_lower_index():
    got = native_source(index_of(["abcdX", "abcdY", "abcdZ"], ["t", "u", "v"]), ["abcdW"])
    assert got["nn"] == [0]


def test_target_ties_prefer_lower_row_then_lower_reference():
    got = run(["s", "s"], ["abcdX", "abcdY"], ["q"], [["abcdY1", "abcdX1"]])
    # both references tie; the lower row (0, matched by reference 1) wins
    assert got["target_nn"] == [0]
    assert got["target_ref_idx"] == [1]
    got = run(["s"], ["abcdX"], ["q"], [["abcdW", "abcdV"]])
    assert (got["target_nn"], got["target_ref_idx"]) == ([0], [0])


def test_pair_exposure_uses_min_of_sides():
    sources = ["the cat sat", "the cat sat on", "a dog ran"]
    targets = ["zz", "el gato", "el gato"]
    got = run(sources, targets, ["the cat sat"], [["el gato"]])
    oracle = BruteForce(sources, targets).pair("the cat sat", ["el gato"])
    # row 0: source exact but target unrelated → min is 0; row 1 is min(0.75-ish, 1)
    assert got["pair_nn"] == [1] == [oracle[1]]
    assert got["pair_exposure"][0] == pytest.approx(float(oracle[0]), abs=1e-12)
    assert got["source_nn"] == [0]
    assert got["target_nn"] == [1]


def test_pair_exact_needs_both_sides_on_one_row():
    got = run(["a b c", "x y z"], ["x y z", "a b c"], ["a b c"], [["a b c"]])
    assert got["source_exact"] == [True]
    assert got["target_exact"] == [True]
    assert got["pair_exact"] == [False]
    assert got["pair_exposure"][0] < 1.0


def test_pair_exposure_is_exact_beyond_top_lists():
    # 60 rows strong on one side only, then a row moderate on both: a top-50 rerank of each
    # side misses it, the exact pair search must not.
    sources = [f"query text {i:03d}" for i in range(60)] + ["unrelated"] * 60 + ["quer text 999"]
    targets = ["nothing"] * 60 + [f"reference {i:03d}" for i in range(60)] + ["refer nce 999"]
    queries, refs = ["query text 999"], [["reference 999"]]
    got = run(sources, targets, queries, refs)
    want = BruteForce(sources, targets).pair(queries[0], refs[0])
    assert got["pair_nn"] == [want[1]] == [120]
    assert got["pair_exposure"][0] == pytest.approx(float(want[0]), abs=1e-12)


def test_tm_index_ignores_references():
    index = index_of(["the cat", "the dog"], ["el gato", "el perro"])
    a = native_audit(index, ["the cat"], [["el perro"]])
    b = native_audit(index, ["the cat"], [["el gato"]])
    assert a["source_nn"] == b["source_nn"] == [0]


def test_batches_and_threads_agree_with_one_call():
    sources = [f"sentence number {i} about {i % 7}" for i in range(200)]
    targets = [f"frase número {i} sobre {i % 5}" for i in range(200)]
    index = index_of(sources, targets)
    queries = [f"sentence number {i * 3} about {i}" for i in range(40)]
    refs = [[f"frase número {i * 3}"] for i in range(40)]
    whole = native_audit(index, queries, refs, threads=1)
    parts = [
        native_audit(index, queries[i : i + 7], refs[i : i + 7], threads=2) for i in range(0, 40, 7)
    ]
    for key in whole:
        if key != "stats":
            assert whole[key] == [v for p in parts for v in p[key]]
    stats = whole["stats"]
    assert set(stats) == {
        "postings_visited",
        "postings_total",
        "candidates_verified",
        "searches_counted",
        "pairs_counted",
    }
    assert 0 < stats["postings_visited"] <= stats["postings_total"]


def test_joined_texts_as_utf8_bytes_index_like_strings():
    sources = ["caf\u00e9 cr\u00e8me", "\U0001f600 smile", "plain text"]
    targets = ["caf\u00e9 \u00e0 la cr\u00e8me", "sourire \U0001f600", "texte"]
    queries = ["cafe creme", "\U0001f600 smiles", "plain"]
    refs = [["caf\u00e9"], ["sourire"], ["texte simple"]]
    as_str = RetrievalIndex.from_joined("\n".join(sources), "\n".join(targets), 3, ORDERS)
    as_bytes = RetrievalIndex.from_joined(
        "\n".join(sources).encode(), "\n".join(targets).encode(), 3, ORDERS
    )
    assert (
        as_bytes.audit(queries, refs, **EXACT)["source"]
        == as_str.audit(queries, refs, **EXACT)["source"]
    )
    assert (
        as_bytes.audit(queries, refs, **EXACT)["pair"]
        == as_str.audit(queries, refs, **EXACT)["pair"]
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: RetrievalIndex(["a"], ["a", "b"], ORDERS), "same length"),
        (lambda: RetrievalIndex(["a"], ["a"], orders=[]), "at least one"),
        (lambda: RetrievalIndex(["a"], ["a"], orders=[3, 0]), ">= 1"),
        (lambda: RetrievalIndex(["a"], ["a"], ORDERS, threads=0), "threads"),
        (lambda: RetrievalIndex.from_joined("a", "a", 1, ORDERS, dense_min_df=0), "dense_min_df"),
        (lambda: RetrievalIndex.from_joined(b"a\xff", b"a", 1, ORDERS), "sources is not UTF-8"),
        (lambda: index_of(["a"], ["a"]).audit(["a"], [[]], **EXACT), "reference"),
        (lambda: index_of(["a"], ["a"]).audit(["a", "b"], [["a"]], **EXACT), "same length"),
        (
            lambda: index_of(["a"], ["a"]).audit(["a"], [["a"]], SearchSettings("approx")),
            "mode",
        ),
        (
            lambda: index_of(["a"], ["a"]).search_source(
                ["a"], SearchSettings("fast", DEFAULT_RARE_GRAMS, 0)
            ),
            "1",
        ),
        (
            lambda: index_of(["a"], ["a"]).search_source(["a"], SearchSettings("fast", -1, 8)),
            "rare_grams",
        ),
        (
            lambda: index_of(["a"], ["a"]).search_source(
                ["a"],
                SearchSettings(measure="cosine"),
            ),
            "measure",
        ),
        (lambda: index_of(["a"], ["a"]).search_source(["a"], object()), "mode is missing"),
        (lambda: index_of(["a"], ["a"]).search_target([[]], **EXACT), "reference"),
    ],
)
def test_bad_arguments_raise_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: RetrievalIndex(["a"], ["a"]),
        lambda: RetrievalIndex.from_joined("a", "a", 1),
        lambda: index_of(["a"], ["a"]).audit(["a"], [["a"]]),
        lambda: index_of(["a"], ["a"]).search_source(["a"]),
        lambda: index_of(["a"], ["a"]).search_target([["a"]]),
    ],
)
def test_binding_has_no_tuning_defaults(call):
    # orders and the search settings default in warehouse.exposure.config only
    with pytest.raises(TypeError, match="missing"):
        call()


def test_index_reports_size_and_orders():
    index = RetrievalIndex(["a", "b"], ["c", "d"], orders=[4, 2, 2])
    assert index.n_docs == 2
    assert index.orders == [2, 4]
    assert "n_docs=2" in repr(index)


@pytest.mark.parametrize(
    ("text", "config", "want"),
    [
        ("  ﬁne\u00a0\uff34\uff45\uff41²  ", NormalizationConfig(), "fine Tea2"),
        ("\u201cit\u2019s\u201d \u2014 ok", NormalizationConfig(punctuation=True), '"it\'s" - ok'),
        ("\u201cit\u2019s\u201d", NormalizationConfig(), "\u201cit\u2019s\u201d"),
        ("Crème Brûle\u0301e", NormalizationConfig(strip_diacritics=True), "Creme Brulee"),
        (
            "Straße \u03a3\u0391\u03a3",
            NormalizationConfig(casefold=True),
            "strasse \u03c3\u03b1\u03c3",
        ),
        ("a\t\n b\u3000c\x85", NormalizationConfig(), "a b c"),
        ("", NormalizationConfig(True, True, True), ""),
    ],
)
def test_normalize(text, config, want):
    assert normalize(text, config) == want


def test_signature_part():
    assert NormalizationConfig().signature_part() == "nfkc"
    assert NormalizationConfig(True, True, True).signature_part() == "nfkc+punct+nodiac+casefold"
    assert NormalizationConfig(casefold=True).signature_part() == "nfkc+casefold"
