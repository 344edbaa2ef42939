"""Text normalisation for exposure retrieval (docs/exposure.md), identical to tame-mt's."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

import pyarrow as pa

# Curly single quotes (U+2018 to U+201B) and double quotes (U+201C to U+201F) become straight
# ones, the dashes U+2010 to U+2015 a hyphen-minus, and NO-BREAK SPACE a space.
_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys(range(0x2018, 0x201C), "'"),
        **dict.fromkeys(range(0x201C, 0x2020), '"'),
        **dict.fromkeys(range(0x2010, 0x2016), "-"),
        0x00A0: " ",
    }
)


@dataclass(frozen=True)
class NormalizationConfig:
    """Optional steps after NFKC; all off by default."""

    punctuation: bool = False
    strip_diacritics: bool = False
    casefold: bool = False

    def signature_part(self) -> str:
        """Short description of the steps, e.g. "nfkc" or "nfkc+punct+nodiac+casefold"."""
        steps = ["nfkc"]
        if self.punctuation:
            steps.append("punct")
        if self.strip_diacritics:
            steps.append("nodiac")
        if self.casefold:
            steps.append("casefold")
        return "+".join(steps)


DEFAULT_CONFIG = NormalizationConfig()


def _strip_marks(text: str) -> str:
    """Decompose, drop nonspacing marks (category Mn), recompose."""
    decomposed = unicodedata.normalize("NFD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) != "Mn")
    return unicodedata.normalize("NFC", kept)


# Lines of a joined text are normalised in runs of about this many characters, so only the runs
# that need it are rewritten.
_NFKC_RUN = 4096


def _nfkc_lines(text: str) -> str:
    """NFKC of `text`, line by line: only the lines not already in NFKC are rewritten (in real
    text a few lines in a thousand, yet one in most runs of thousands of characters)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.isascii() and not unicodedata.is_normalized("NFKC", line):
            lines[i] = unicodedata.normalize("NFKC", line)
    return "\n".join(lines)


# NFKC of each non-ASCII character met in a run that needed NFKC, and the characters among them
# that NFKC rewrites (with their images).
_IMAGES: dict[str, str] = {}
_REWRITTEN: dict[str, str] = {}


def _learn_rewritten(text: str) -> None:
    """Record which non-ASCII characters of `text` NFKC rewrites, and into what."""
    for ch in set(text):
        if ch not in _IMAGES and not ch.isascii():
            image = _IMAGES[ch] = unicodedata.normalize("NFKC", ch)
            if image != ch:
                _REWRITTEN[ch] = image


def _by_images(run: str) -> str | None:
    """NFKC of `run` by replacing every character known to be rewritten with its image, when
    the result is in NFKC; else None. Exact: an image has the same NFKD form as its character,
    so the result has the NFKD form of `run`, and a text in NFKC is the NFKC of its NFKD form."""
    text = run
    for ch, image in _REWRITTEN.items():
        if ch in text:
            text = text.replace(ch, image)
    return text if unicodedata.is_normalized("NFKC", text) else None


def _nfkc_run(run: str) -> str:
    """NFKC of a run of lines known to need it. When its first line needs it too (text where
    most lines change, such as a symbol on every line): by replacing the characters NFKC
    rewrites (`_by_images`), else in one call; otherwise line by line."""
    newline = run.find("\n")
    first = run if newline < 0 else run[:newline]
    if first.isascii() or unicodedata.is_normalized("NFKC", first):
        return _nfkc_lines(run)
    _learn_rewritten(first)
    replaced = _by_images(run)
    if replaced is None:  # characters met on later lines only, or characters that compose
        _learn_rewritten(run)
        replaced = _by_images(run)
    return replaced if replaced is not None else unicodedata.normalize("NFKC", run)


def _nfkc(text: str) -> str:
    """NFKC of `text`, run by run of whole lines (a newline never composes with a neighbour,
    so each run normalises on its own); runs already in NFKC are kept as they are, and in the
    others only the lines that need it are rewritten."""
    if len(text) <= _NFKC_RUN:
        if unicodedata.is_normalized("NFKC", text):  # the exact check is much cheaper
            return text
        return _nfkc_lines(text)
    runs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + _NFKC_RUN)
        end = len(text) if end < 0 else end + 1
        run = text[start:end]
        if not run.isascii() and not unicodedata.is_normalized("NFKC", run):
            run = _nfkc_run(run)
        runs.append(run)
        start = end
    return "".join(runs)


def _steps(text: str, config: NormalizationConfig) -> str:
    """NFKC and the configured optional steps (whitespace untouched)."""
    if not text.isascii():  # ASCII is already NFKC, has no marks and no mapped punctuation
        text = _nfkc(text)
        if config.punctuation:
            text = text.translate(_PUNCTUATION)
        if config.strip_diacritics:
            text = _strip_marks(text)
    if config.casefold:
        text = text.casefold()
    return text


def normalize(text: str, config: NormalizationConfig = DEFAULT_CONFIG) -> str:
    """NFKC, the configured optional steps, then whitespace runs collapsed and ends stripped."""
    return " ".join(_steps(text, config).split())


Texts: TypeAlias = Sequence[str] | pa.Array | pa.ChunkedArray


def _joined(texts: Texts) -> str:
    """The texts joined by newlines; an Arrow string column is joined without a Python string
    per text (nulls read as empty texts)."""
    if isinstance(texts, (pa.Array, pa.ChunkedArray)):
        if len(texts) == 0:
            return ""
        import pyarrow.compute as pc  # only index builds join columns (~50 ms of start-up)

        column = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
        column = pc.fill_null(column.cast(pa.large_string()), "")
        one_list = pa.LargeListArray.from_arrays(pa.array([0, len(column)], pa.int64()), column)
        newline = pa.scalar("\n", pa.large_string())
        return str(pc.binary_join(one_list, newline)[0].as_py())
    return "\n".join(texts)


def normalize_joined(texts: Texts, config: NormalizationConfig = DEFAULT_CONFIG) -> str:
    """The texts (strings, or an Arrow string column) after every step of `normalize` but the
    whitespace collapsing, joined by newlines (no text then contains one); collapsing each line
    gives `normalize_many`."""
    joined = _joined(texts)
    newlines = max(len(texts) - 1, 0)
    if joined.count("\n") == newlines:
        # One pass over all texts at once: every step maps code points (or composes within
        # runs that a newline ends), so it commutes with joining on newlines.
        joined = _steps(joined, config)
        if joined.count("\n") == newlines:
            return joined
    # A text holds a newline (or a step made one): normalise text by text.
    items = texts.to_pylist() if isinstance(texts, (pa.Array, pa.ChunkedArray)) else texts
    return "\n".join(normalize(text or "", config) for text in items)


def normalize_many(texts: Iterable[str], config: NormalizationConfig = DEFAULT_CONFIG) -> list[str]:
    """`normalize` applied to each text."""
    texts = list(texts)
    if not texts:
        return []
    return [" ".join(line.split()) for line in normalize_joined(texts, config).split("\n")]
