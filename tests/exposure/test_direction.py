"""The direction check's character-trigram profiles."""

from collections import Counter

from warehouse.exposure.direction import _profile


def test_a_profile_counts_the_lowercased_trigrams_of_each_padded_text():
    assert _profile(["Ab c", "ab"]) == Counter({" ab": 2, "ab ": 2, "b c": 1, " c ": 1})


def test_a_text_shorter_than_a_trigram_still_counts_its_padding():
    assert _profile(["x", ""]) == Counter({" x ": 1})
