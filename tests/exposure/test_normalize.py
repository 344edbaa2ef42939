"""NFKC of long batches, whichever way each run of lines is rewritten (whole, or line by line)."""

from __future__ import annotations

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


def test_a_run_is_rewritten_whole_when_its_first_line_changes(monkeypatch):
    starts_changing = "\n".join(lines("cs", 100))
    starts_stable = "\n".join(lines("sc", 100))
    want = {t: unicodedata.normalize("NFKC", t) for t in (starts_changing, starts_stable)}
    calls: list[str] = []
    real = unicodedata.normalize

    def counting(form: Any, text: str) -> str:
        calls.append(text)
        return real(form, text)

    monkeypatch.setattr(module.unicodedata, "normalize", counting)
    assert module._nfkc_run(starts_changing) == want[starts_changing]
    assert calls == [starts_changing]  # one call for the whole run
    calls.clear()
    assert module._nfkc_run(starts_stable) == want[starts_stable]
    # Only the changing lines, one by one.
    assert calls == [line for i, line in enumerate(starts_stable.split("\n")) if i % 2]
