"""Text normalisation for exposure retrieval (docs/exposure.md), identical to tame-mt's."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


def _steps(text: str, config: NormalizationConfig) -> str:
    """NFKC and the configured optional steps (whitespace untouched)."""
    if not text.isascii():  # ASCII is already NFKC, has no marks and no mapped punctuation
        if not unicodedata.is_normalized("NFKC", text):  # the exact check is much cheaper
            text = unicodedata.normalize("NFKC", text)
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


def normalize_joined(texts: Sequence[str], config: NormalizationConfig = DEFAULT_CONFIG) -> str:
    """The texts after every step of `normalize` but the whitespace collapsing, joined by
    newlines (no text then contains one); collapsing each line gives `normalize_many`."""
    joined = "\n".join(texts)
    newlines = max(len(texts) - 1, 0)
    if joined.count("\n") == newlines:
        # One pass over all texts at once: every step maps code points (or composes within
        # runs that a newline ends), so it commutes with joining on newlines.
        joined = _steps(joined, config)
        if joined.count("\n") == newlines:
            return joined
    # A text holds a newline (or a step made one): normalise text by text.
    return "\n".join(normalize(text, config) for text in texts)


def normalize_many(texts: Iterable[str], config: NormalizationConfig = DEFAULT_CONFIG) -> list[str]:
    """`normalize` applied to each text."""
    texts = list(texts)
    if not texts:
        return []
    return [" ".join(line.split()) for line in normalize_joined(texts, config).split("\n")]
