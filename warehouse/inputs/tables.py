"""Tabular files other tools write — Parquet, JSON Lines, CSV and TSV (a Hugging Face dataset
saved to disk is one of these) — read as named columns; a column may be a dotted path into nested
records (`translation.fr`). Problems name the file, the row's line and the column
(docs/inputs.md, "Tables")."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse.errors import InputError, UsageError
from warehouse.inputs.textio import decode_utf8, read_bytes, split_lines

TABLE_FORMATS = ("parquet", "jsonl", "csv", "tsv")
# The columns of `tame-wh export`'s records, in order (docs/cli.md, "tame-wh export"): a TSV
# with this header is one tame-wh wrote, its cells escaped as `tsv_escaped` writes them.
EXPORT_COLUMNS = (
    "run_id", "model_slug", "condition", "test_set", "seg_idx", "seg_id", "source", "references",
    "hypothesis", "error", "bleu", "chrf_plus_plus", "ter", "exact_match", "metrics",
    "audit_id", "source_exposure", "target_exposure", "pair_exposure", "bin",
)  # fmt: skip
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {v[1]: k for k, v in _ESCAPES.items()}
_ESCAPED = re.compile(r"\\([\\tnr])")


def tsv_escaped(text: str) -> str:
    """Text as one TSV cell: backslashes, tabs, newlines and carriage returns as `\\\\`,
    `\\t`, `\\n`, `\\r` (the "linear TSV" convention; `tsv_unescaped` undoes it)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def tsv_unescaped(cell: str) -> str:
    """The text of a cell `tsv_escaped` wrote."""
    return _ESCAPED.sub(lambda m: _UNESCAPES[m[1]], cell)


_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
}


def table_format(path: str | Path, given: str | None = None) -> str:
    """The file's format: `given`, else told by its suffix (`.gz` aside)."""
    if given is not None:
        if given not in TABLE_FORMATS:
            raise UsageError(f"--format: expected one of {', '.join(TABLE_FORMATS)}, got {given!r}")
        return given
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    found = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if found is None:
        raise UsageError(
            f"{path}: cannot tell the table format from the file name; give --format "
            f"({', '.join(TABLE_FORMATS)})"
        )
    return found


@dataclass(frozen=True)
class Table:
    """A file's records in order, each with the line (or row number) it starts on."""

    path: str
    records: list[dict[str, Any]]
    lines: list[int]
    columns: list[str]  # the top-level column names, in file order

    def texts(self, column: str) -> list[str]:
        """A text column (a dotted path into nested records): every value a string."""
        out = []
        for record, line in zip(self.records, self.lines, strict=True):
            value = self._value(record, column, line)
            if not isinstance(value, str):
                got = "null" if value is None else type(value).__name__
                raise InputError(f"column {column!r}: expected text, got {got}", self.path, line)
            out.append(value)
        return out

    def keys(self, column: str) -> list[str]:
        """An id column: strings or integers, non-empty and unique."""
        out: list[str] = []
        seen: dict[str, int] = {}
        for record, line in zip(self.records, self.lines, strict=True):
            value = self._value(record, column, line)
            if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
                raise InputError(
                    f"column {column!r}: an id must be a non-empty string or an integer, got "
                    f"{json.dumps(value)[:40]}",
                    self.path,
                    line,
                )
            key = str(value)
            if key in seen:
                raise InputError(
                    f"column {column!r}: id {key!r} repeats the id of line {seen[key]}",
                    self.path,
                    line,
                )
            seen[key] = line
            out.append(key)
        return out

    def numbers(self, column: str) -> list[float | None]:
        """A numeric column (null: absent); numbers must be finite."""
        out: list[float | None] = []
        for record, line in zip(self.records, self.lines, strict=True):
            value = self._value(record, column, line)
            if value is None or value == "":
                out.append(None)
                continue
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = float("nan")
            if (
                isinstance(value, bool)
                or number != number
                or number
                in (
                    float("inf"),
                    float("-inf"),
                )
            ):
                raise InputError(
                    f"column {column!r}: expected a finite number, got {json.dumps(value)[:40]}",
                    self.path,
                    line,
                )
            out.append(number)
        return out

    def _value(self, record: dict[str, Any], column: str, line: int) -> Any:
        """One record's value at a dotted column path; a missing one names what exists."""
        try:
            return _dig(record, column)
        except KeyError:
            known = ", ".join(repr(c) for c in self.columns[:12]) or "none"
            raise InputError(f"no column {column!r} (columns: {known})", self.path, line) from None


def _dig(record: dict[str, Any], column: str) -> Any:
    """The value at a column name, or at a dotted path into nested objects."""
    if column in record:
        return record[column]
    value: Any = record
    for part in column.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(column)
        value = value[part]
    return value


def read_table(path: str | Path, fmt: str | None = None) -> Table:
    """Every record of a Parquet, JSON Lines, CSV or TSV file (format from the suffix unless
    given); an empty table is an error."""
    name = str(path)
    kind = table_format(path, fmt)
    if kind == "parquet":
        table = _parquet(path, name)
    else:
        text = decode_utf8(read_bytes(path), name)
        table = _jsonl(text, name) if kind == "jsonl" else _delimited(text, name, kind)
    if not table.records:
        raise InputError("no records (an empty table)", name)
    return table


def _parquet(path: str | Path, name: str) -> Table:
    """A Parquet file's rows (row numbers count from 1)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = pq.read_table(io.BytesIO(read_bytes(path)))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not a readable Parquet file ({exc})", name) from None
    records = data.to_pylist()
    return Table(name, records, list(range(1, len(records) + 1)), list(data.column_names))


def _jsonl(text: str, name: str) -> Table:
    """JSON Lines: one object per non-blank line."""
    records, lines = [], []
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg} at column {exc.colno})", name, number) from None
        if not isinstance(record, dict):
            raise InputError(
                f"expected a JSON object, got {type(record).__name__}", name, number
            ) from None
        records.append(record)
        lines.append(number)
    columns = list(records[0]) if records else []
    return Table(name, records, lines, columns)


def _delimited(text: str, name: str, kind: str) -> Table:
    """CSV (RFC 4180 quoting) or TSV (no quoting: a field holds no tab or newline), with a
    header line naming the columns."""
    if kind == "csv":
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    try:
        header = next(reader, None)
        if header is None:
            return Table(name, [], [], [])
        _check_header(header, name)
        ours = tuple(header) == EXPORT_COLUMNS  # a tame-wh export: its escapes are undone
        records, lines = [], []
        start = reader.line_num + 1
        for row in reader:
            if row == []:  # a blank line
                start = reader.line_num + 1
                continue
            if len(row) != len(header):
                raise InputError(
                    f"{len(row)} fields where the header has {len(header)}", name, start
                )
            if kind == "tsv" and ours:
                row = [tsv_unescaped(cell) for cell in row]
            records.append(dict(zip(header, row, strict=True)))
            lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"not {kind.upper()} ({exc})", name, reader.line_num) from None
    return Table(name, records, lines, header)


def _check_header(header: Sequence[str], name: str) -> None:
    """A header names each column once, none empty."""
    seen: set[str] = set()
    for column in header:
        if not column or column in seen:
            problem = "an empty column name" if not column else f"column {column!r} twice"
            raise InputError(f"the header has {problem}", name, 1)
        seen.add(column)
