"""Language labels: a `dataset.language_pair` read as two codes, and whether two labelled
directions contradict each other (docs/inputs.md)."""

from __future__ import annotations

import re

from warehouse.inputs.corpus_files import normalize_lang

# `en-es`, `en_Latn-es`, or any two codes around `→` or `>` (`EN_us→es`, `en>pt-BR`).
_LANG_PAIR = re.compile(
    r"^([A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,8})*)[→>]([A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,8})*)$"
    r"|^([A-Za-z]{2,3}(?:_[A-Za-z]{4})?)-([A-Za-z]{2,3}(?:_[A-Za-z]{4})?)$"
)


def language_pair(pair: str | None) -> tuple[str | None, str | None]:
    """Source and target language codes (BCP 47 spelling) from a `dataset.language_pair` such
    as `en-es`, `EN_us→es` or `en>pt-BR` ((None, None) when it is not one)."""
    match = _LANG_PAIR.match(pair or "")
    if not match:
        return None, None
    src, tgt = (match.group(1), match.group(2)) if match.group(1) else match.group(3, 4)
    return normalize_lang(src), normalize_lang(tgt)


def base_language(code: str | None) -> str | None:
    """The primary language subtag (`pt-BR` → `pt`), None when unlabelled."""
    return code.split("-")[0].lower() if code else None


def direction_conflict(
    what: str,
    labels: tuple[str | None, str | None],
    other: str,
    other_labels: tuple[str | None, str | None],
) -> str | None:
    """A warning when two labelled translation directions name different languages (regions
    and scripts aside), saying when one is the other reversed; None when they agree or either
    side is unlabelled."""
    mine = tuple(base_language(code) for code in labels)
    theirs = tuple(base_language(code) for code in other_labels)
    if None in mine or None in theirs or mine == theirs:
        return None
    shown = "→".join(str(code) for code in labels)
    other_shown = "→".join(str(code) for code in other_labels)
    if mine == theirs[::-1]:
        return (
            f"{what} is labelled {shown} but {other} {other_shown}: the opposite direction "
            "(is one of them registered the wrong way round?)"
        )
    return f"{what} is labelled {shown} but {other} {other_shown}"


def language_conflict(
    what: str, labels: tuple[str | None, str | None], other: str, language: str | None
) -> str | None:
    """A warning when text in one `language` (documents, monolingual text) is in neither
    language of a labelled direction (regions and scripts aside); None when it is in one of
    them or either is unlabelled."""
    mine = tuple(base_language(code) for code in labels)
    theirs = base_language(language) if language is not None else None
    if theirs is None or None in mine or theirs in mine:
        return None
    return f"{what} is labelled {'→'.join(str(c) for c in labels)} but {other} is in {language}"
