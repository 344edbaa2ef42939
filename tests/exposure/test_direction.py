"""The direction check's character-trigram similarities, against the definition in Python."""

import math
from collections import Counter

from warehouse.exposure.direction import SAMPLE, reversed_direction, side_similarities


def _profile(texts: list[str]) -> Counter[str]:
    """The definition: trigram counts of each lowercased text padded with a space each side."""
    grams: Counter[str] = Counter()
    for text in texts:
        padded = f" {text.lower()} "
        grams.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return grams


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(count * b[gram] for gram, count in a.items() if gram in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def test_similarities_equal_the_definition_to_the_last_bit():
    test = ["Ab c", "ab", "x", "", "Été ÉTÉ", "ΣΊΣΥΦΟΣ", "İstanbul", "naïve 😀 text"]
    sources = ["ab c d", "été", "sisyphe", "x y"]
    targets = ["ΣΊΣΥΦΟΣ σίσυφος", "istanbul", "😀😀😀", "AB"]
    want = (
        _cosine(_profile(test), _profile(sources)),
        _cosine(_profile(test), _profile(targets)),
    )
    assert side_similarities(test, sources, targets) == want
    assert 0 < want[0] < 1 and 0 < want[1] < 1


def test_empty_texts_have_no_similarity():
    assert side_similarities(["", ""], ["abc"], ["abc"]) == (0.0, 0.0)
    same = _cosine(_profile(["abc"]), _profile(["abc"]))
    assert side_similarities(["abc"], [], ["abc"]) == (0.0, same) and math.isclose(same, 1.0)


def test_long_sides_are_sampled_at_evenly_spaced_lines():
    n = 3 * SAMPLE
    sources = [f"line {i} alpha" if i % 3 == 0 else "zzzz" for i in range(n)]
    sampled = [sources[i] for i in range(0, n, n // SAMPLE)]
    assert side_similarities(["alpha"], sources, ["x"]) == side_similarities(
        ["alpha"], sampled, ["x"]
    )


def test_a_test_set_facing_the_targets_is_reported_once_with_both_similarities():
    english = ["the cat sat on the mat", "where is the station", "this is the house"]
    french = ["le chat est sur le tapis", "où est la gare", "c'est la maison"]
    warning = reversed_direction(french, english, french)
    assert warning is not None and "wrong way round" in warning
    assert "1.00 to its targets" in warning
    assert reversed_direction(english, english, french) is None
