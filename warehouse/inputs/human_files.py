"""Human judgment files read and checked (docs/human.md): MQM in the TSV layout of Google's
releases, ESA and DA scores as TSV, and JSON Lines for MQM, ESA (with error spans) and DA.
Nothing here touches the warehouse."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warehouse.errors import InputError, UsageError
from warehouse.inputs.json_checks import JsonPath, loads_checked
from warehouse.inputs.textio import decode_utf8, line_limit, read_bytes, split_lines

HUMAN_FORMATS = ("mqm-tsv", "esa", "da", "jsonl")
SCORE_COLUMNS = ("system", "seg_id", "rater", "score")  # the esa and da TSV layouts
SCHEMES = ("mqm", "esa", "da")
MQM_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category",
               "severity")  # fmt: skip
NO_ERROR = "no-error"
_MARK = re.compile(r"</?v>")


@dataclass(frozen=True)
class Annotation:
    """One error (or a judgment's "no error" / score) as a file states it, span marks removed."""

    line: int
    system: str
    seg_key: str
    rater: str
    source: str | None  # None: the file does not give it
    target: str | None
    category: str | None = None  # None: the line carries a score, not an error
    severity: str | None = None
    span: tuple[int, int] | None = None  # characters into `target`
    source_span: tuple[int, int] | None = None
    comment: str | None = None
    score: float | None = None
    doc: str | None = None


@dataclass
class HumanFile:
    """A judgment file read and validated: its scheme, lines and content hash."""

    path: str
    name: str
    scheme: str
    format: str
    annotations: list[Annotation]
    sha256: str
    size: int
    systems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.systems:
            self.systems = sorted({a.system for a in self.annotations})


def strip_marks(text: str, where: tuple[str, int], what: str) -> tuple[str, tuple[int, int] | None]:
    """Text without its `<v>…</v>` marks, and the marked span (characters into the stripped
    text; the first and last mark bound it when a line marks several pieces). A last `<v>` left
    open (one line of Google's TED release) marks up to the end."""
    marks = list(_MARK.finditer(text))
    if not marks:
        return text, None
    if any(m.group() != ("<v>" if i % 2 == 0 else "</v>") for i, m in enumerate(marks)):
        raise InputError(f"unbalanced <v>…</v> marks in the {what}", *where)
    plain = _MARK.sub("", text)
    if len(marks) % 2:  # open to the end
        return plain, (marks[0].start(), len(plain))
    removed = sum(len(m.group()) for m in marks[:-1])
    return plain, (marks[0].start(), marks[-1].start() - removed)


def _read_text(path: str | Path) -> tuple[bytes, list[str]]:
    """The file's bytes and lines (UTF-8, the line limit checked)."""
    data = read_bytes(path)
    if not data:
        raise InputError("empty file (no judgments)", str(path))
    lines = split_lines(decode_utf8(data, str(path)))
    longest = line_limit()
    for number, line in enumerate(lines, start=1):
        if len(line) > longest:
            raise InputError(f"the line holds {len(line):,} characters", str(path), number)
    return data, lines


def _tsv_rows(
    name: str,
    lines: list[str],
    columns: Sequence[str],
    what: str,
    required: Sequence[str],
    optional_last: str | None = None,
) -> Iterator[tuple[int, dict[str, str]]]:
    """The lines after a header naming at least `columns`, as (line number, row); blank lines
    are skipped; a line may lack only the `optional_last` column; `required` fields must not be
    empty."""
    header = lines[0].split("\t") if lines else []
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(
            f"not {what}: the header lacks {', '.join(missing)} (expected the columns "
            f"{' '.join(columns)}{f' [{optional_last}]' if optional_last else ''} …)",
            name,
            1,
        )
    shortest = len(header) - (optional_last is not None and optional_last in header)
    found = False
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if not shortest <= len(fields) <= len(header):
            raise InputError(
                f"{len(fields)} tab-separated fields where the header has {len(header)}",
                name,
                number,
            )
        row = dict(zip(header, fields, strict=False))
        for column, text in row.items():
            _refuse_control(text, column, name, number)
        for column in required:
            if not row[column].strip():
                raise InputError(f"empty {column}", name, number)
        found = True
        yield number, row
    if not found:
        raise InputError("no judgments after the header", name)


def _judged(number: int, row: dict[str, str]) -> dict[str, Any]:
    """Who judged what, from a TSV row: its line, the system, the segment id and the rater."""
    return {
        "line": number,
        "system": row["system"].strip(),
        "seg_key": row["seg_id"].strip(),
        "rater": row["rater"].strip(),
    }


def _read_mqm_tsv(name: str, lines: list[str]) -> list[Annotation]:
    """Google's MQM TSV: a header naming at least MQM_COLUMNS (a `comment` column optional), then
    one error per line; `No-error` marks a judgment without errors."""
    out: list[Annotation] = []
    rows = _tsv_rows(name, lines, MQM_COLUMNS, "an MQM TSV",
                     ("system", "seg_id", "rater", "severity"), "comment")  # fmt: skip
    for number, row in rows:
        where = (name, number)
        target, span = strip_marks(row["target"], where, "target")
        source, source_span = strip_marks(row["source"], where, "source")
        severity = row["severity"].strip()
        no_error = severity.lower() == NO_ERROR
        out.append(
            Annotation(
                **_judged(number, row),
                source=source,
                target=target,
                category=(row["category"].strip() or "(none)") if not no_error else NO_ERROR,
                severity=severity if not no_error else NO_ERROR,
                span=None if no_error else span,
                source_span=None if no_error else source_span,
                comment=(row.get("comment") or "").strip() or None,
                doc=row["doc"].strip() or None,
            )
        )
    return out


def _read_score_tsv(name: str, lines: list[str], scheme: str) -> list[Annotation]:
    """ESA or DA scores as TSV: a header naming at least SCORE_COLUMNS (`source`, `target` and
    `doc` optional), then one judgment per line."""
    out: list[Annotation] = []
    what = f"{'an' if scheme == 'esa' else 'a'} {scheme.upper()} TSV"
    for number, row in _tsv_rows(name, lines, SCORE_COLUMNS, what, ("system", "seg_id", "rater")):
        try:
            score = float(row["score"])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(f"score {row['score']!r} is not a finite number", name, number)
        out.append(
            Annotation(
                **_judged(number, row),
                source=row.get("source"),
                target=row.get("target"),
                score=score,
                doc=(row.get("doc") or "").strip() or None,
            )
        )
    return out


def _text(record: dict[str, Any], key: str, where: tuple[str, int], *, required: bool) -> Any:
    """A string field of a JSON Lines record (ids may be integers)."""
    value = record.get(key)
    if value is None:
        if required:
            raise InputError(f'missing "{key}"', *where)
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f'"{key}" must be a string, got {type(value).__name__}', *where)
    text = str(value)
    if required and not text.strip():
        raise InputError(f'"{key}" is empty', *where)
    return text


def _span(
    error: dict[str, Any], where: tuple[str, int], length: int | None
) -> tuple[int, int] | None:
    """An error's `start`/`end` character offsets, checked against the target's length."""
    start, end = error.get("start"), error.get("end")
    if start is None and end is None:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise InputError('"start" and "end" must both be integers', *where)
    assert isinstance(start, int) and isinstance(end, int)
    if not 0 <= start <= end or (length is not None and end > length):
        raise InputError(f"span {start}-{end} lies outside the target", *where)
    return start, end


def _read_jsonl(name: str, lines: list[str]) -> tuple[str, list[Annotation]]:
    """JSON Lines, one judgment per line: system, seg_id, rater, scheme, optional source and
    target, `score` (ESA, DA) and `errors` (MQM, ESA: category, severity, start, end, comment)."""
    out: list[Annotation] = []
    schemes: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise InputError("blank line where a JSON object was expected", name, number)
        where = (name, number)
        record = loads_checked(line, JsonPath(name, line=number))
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}", *where)
        scheme = record.get("scheme")
        if scheme not in SCHEMES:
            raise InputError(
                f'"scheme" must be one of {", ".join(SCHEMES)}, got {scheme!r}', *where
            )
        schemes.add(scheme)
        if len(schemes) > 1:
            raise InputError(
                f"scheme {scheme} in a file of {min(schemes - {scheme})} judgments", *where
            )
        base = {
            "line": number,
            "system": _text(record, "system", where, required=True),
            "seg_key": _text(record, "seg_id", where, required=True),
            "rater": _text(record, "rater", where, required=True),
            "source": _text(record, "source", where, required=False),
            "target": _text(record, "target", where, required=False),
            "doc": _text(record, "doc", where, required=False),
        }
        score = record.get("score")
        if scheme == "mqm":
            if score is not None:
                raise InputError('an MQM judgment has "errors", not a "score"', *where)
        elif (
            isinstance(score, bool)
            or not isinstance(score, (int, float))
            or not math.isfinite(score)
        ):
            raise InputError(f'an {scheme.upper()} judgment needs a finite numeric "score"', *where)
        errors = record.get("errors", [])
        if not isinstance(errors, list) or (scheme == "da" and errors):
            raise InputError('"errors" must be a list (and DA judgments have none)', *where)
        target = base["target"]
        out.append(Annotation(**base, score=None if score is None else float(score),
                              category=NO_ERROR if scheme == "mqm" else None,
                              severity=NO_ERROR if scheme == "mqm" else None))  # fmt: skip
        for error in errors:
            if not isinstance(error, dict):
                raise InputError("each error must be an object", *where)
            category = _text(error, "category", where, required=scheme == "mqm") or "(none)"
            severity = _text(error, "severity", where, required=True)
            out.append(
                Annotation(
                    **base,
                    category=category,
                    severity=severity,
                    span=_span(error, where, None if target is None else len(target)),
                    comment=_text(error, "comment", where, required=False),
                )
            )
    return schemes.pop(), out


# The text fields of a judgment; none may hold a control character but tab and line breaks.
_TEXT_FIELDS = ("system", "seg_key", "rater", "source", "target", "category", "severity",
                "comment", "doc")  # fmt: skip
_ALLOWED_CONTROLS = frozenset("\t\n\r")


def _refuse_control(text: str, field: str, path: str, line: int) -> None:
    """A NUL, ESC or other control character in a text field is an error naming its line."""
    for at, char in enumerate(text):
        if unicodedata.category(char) == "Cc" and char not in _ALLOWED_CONTROLS:
            raise InputError(
                f"the {field} holds the control character U+{ord(char):04X} at character "
                f"{at + 1}; judgment files carry text only",
                path,
                line,
            )


def _refuse_controls(annotations: Sequence[Annotation], path: str) -> None:
    """No text field of any annotation holds a control character (JSON strings can carry them
    escaped)."""
    for a in annotations:
        for name in _TEXT_FIELDS:
            text = getattr(a, name)
            if text:
                _refuse_control(text, "seg_id" if name == "seg_key" else name, path, a.line)


def _once_each(
    annotations: list[Annotation], path: str, strict: bool
) -> tuple[list[Annotation], list[str]]:
    """The annotations with every repeated error line (same system, segment, rater, spans,
    category and severity) kept once, and the warning that says so; with `strict`, a repeated
    line is an error naming it."""
    seen: dict[tuple[Any, ...], int] = {}
    kept: list[Annotation] = []
    repeats: list[tuple[int, int]] = []
    for a in annotations:
        if a.category is None:  # a score, not an error line
            kept.append(a)
            continue
        key = (a.system, a.seg_key, a.rater, a.span, a.source_span, a.category, a.severity)
        if key in seen:
            if strict:
                raise InputError(
                    f"repeats line {seen[key]} (same system, segment, rater, span, category and "
                    "severity); --strict refuses repeated judgments",
                    path,
                    a.line,
                )
            repeats.append((a.line, seen[key]))
            continue
        seen[key] = a.line
        kept.append(a)
    if not repeats:
        return kept, []
    shown = ", ".join(f"{line} (= {first})" for line, first in repeats[:5])
    more = f" and {len(repeats) - 5} more" if len(repeats) > 5 else ""
    return kept, [
        f"{path}: {len(repeats)} judgment line(s) repeat an earlier one (same system, segment, "
        f"rater, span, category and severity) and were stored once: lines {shown}{more} "
        "(--strict refuses them)"
    ]


def read_human_file(
    path: str | Path, fmt: str, *, name: str | None = None, strict: bool = False
) -> HumanFile:
    """Read a judgment file in `fmt` (HUMAN_FORMATS); errors name the file and line. A repeated
    error line is kept once with a warning (an error with `strict`)."""
    if fmt not in HUMAN_FORMATS:
        raise UsageError(f"--format: {fmt!r} is not one of {', '.join(HUMAN_FORMATS)}")
    label = str(path)
    data, lines = _read_text(path)
    if fmt == "mqm-tsv":
        scheme, annotations = "mqm", _read_mqm_tsv(label, lines)
    elif fmt in ("esa", "da"):
        scheme, annotations = fmt, _read_score_tsv(label, lines, fmt)
    else:
        scheme, annotations = _read_jsonl(label, lines)
    _refuse_controls(annotations, label)
    annotations, warnings = _once_each(annotations, label, strict)
    return HumanFile(
        path=label,
        name=name or Path(path).name,
        scheme=scheme,
        format=fmt,
        annotations=annotations,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        warnings=warnings,
    )
