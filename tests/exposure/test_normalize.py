"""NFKC of long batches, whichever way each run of lines is rewritten: by replacing the characters
NFKC rewrites, in one call, or line by line."""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

import pytest

from warehouse.exposure import normalize as module
from warehouse.exposure.normalize import normalize_many

STABLE = "plain words and é, already in NFKC"
# Each of these changes under NFKC: an ordinal indicator, a ligature, e + combining acute.
CHANGING = ["n.\u00ba 7 words", "the \ufb01le is here", "cafe\u0301 au lait"]


def nfkc_each(batch: list[str]) -> list[str]:
    """The oracle: the standard library's NFKC of each text, whitespace collapsed."""
    return [" ".join(unicodedata.normalize("NFKC", t).split()) for t in batch]


def lines(pattern: str, n: int = 1200) -> list[str]:
    """`n` texts (several normalisation runs long): `s` stable, `c` changing, cycled."""
    out = []
    for i in range(n):
        kind = pattern[i % len(pattern)]
        out.append(f"{i} {STABLE}" if kind == "s" else f"{i} {CHANGING[i % len(CHANGING)]}")
    return out


@pytest.mark.parametrize(
    "pattern",
    [
        "c",  # every line changes: each run is rewritten in one call
        "s",  # nothing changes
        "sc",  # every run starts stable: rewritten line by line
        "cs",  # every run's first line changes, the others alternate
        "ssssssssssssssssssssssssssssc",  # a changing line now and then, as in real text
        "cssssssssssssssssssssssssssss",
    ],
)
def test_long_batches_equal_nfkc_of_each_text(pattern):
    batch = lines(pattern)
    assert sum(map(len, batch)) > 4 * module._NFKC_RUN  # the batch spans several runs
    assert normalize_many(batch) == nfkc_each(batch)


# The standard library's NFKC, kept before any test replaces it with a counting one.
NFKC = functools.partial(unicodedata.normalize, "NFKC")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts `unicodedata.normalize` is called on, with the module's caches emptied."""
    seen: list[str] = []

    def counting(form: Any, text: str) -> str:
        seen.append(text)
        return NFKC(text)

    monkeypatch.setattr(module, "_IMAGES", {})
    monkeypatch.setattr(module, "_REWRITTEN", {})
    monkeypatch.setattr(module.unicodedata, "normalize", counting)
    return seen


def run_of(lines: list[str]) -> str:
    return "\n".join(f"{i} {line}" for i, line in enumerate(lines))


def test_symbols_rewritten_on_every_line_are_replaced_not_renormalised(calls):
    # Each line has a character NFKC maps to other characters (an ordinal indicator, a
    # ligature, an ellipsis), nothing that composes.
    run = run_of(["n.\u00ba 7", "the \ufb01le", "wait\u2026", "caf\u00e9 n.\u00ba 2"] * 40)
    want = NFKC(run)
    assert module._nfkc_run(run) == want
    # Only single characters were normalised (to learn their images), never the run.
    assert calls and all(len(text) == 1 for text in calls)
    assert module._REWRITTEN == {"\u00ba": "o", "\ufb01": "fi", "\u2026": "..."}
    # Once learnt, a run costs no call at all.
    calls.clear()
    other = run_of(["the \ufb01le n.\u00ba 1", "x\u2026"] * 40)
    assert module._nfkc_run(other) == NFKC(other)
    assert calls == []


@pytest.mark.parametrize(
    "line",
    [
        "n.\u00ba\u0301 9",  # o + combining acute compose once the ordinal becomes an o
        "cafe\u0301 n.\u00ba 3",  # e + combining acute compose
        "\u1100\u1161 n.\u00ba 4",  # Hangul jamo compose
    ],
)
def test_replacing_falls_back_to_full_nfkc_where_characters_compose(calls, line):
    run = run_of([line, "n.\u00ba 5 plain"] * 40)
    assert module._nfkc_run(run) == NFKC(run)
    assert run in calls  # the run itself was normalised


def test_a_run_starting_with_a_stable_line_is_rewritten_line_by_line(calls):
    lines = [STABLE if i % 2 == 0 else CHANGING[i % 3] for i in range(100)]
    run = run_of(lines)
    assert module._nfkc_run(run) == NFKC(run)
    # Only the changing lines, one by one.
    assert calls == [line for i, line in enumerate(run.split("\n")) if i % 2]
