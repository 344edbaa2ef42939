"""Reading aligned text files: UTF-8, one segment per line, `.gz` transparently (SPEC §4)."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from warehouse.errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = "\ufeff"


def read_bytes(path: str | Path) -> bytes:
    """Whole file contents, gunzipped when the file is gzip; unreadable files raise InputError."""
    name = str(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", name) from None
    except PermissionError:
        raise InputError("permission denied", name) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", name) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip data ({exc})", name) from None
    return data


def decode_utf8(data: bytes, name: str) -> str:
    """Decode UTF-8, naming the line, column and byte of the first invalid sequence."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        raise InputError(
            f"invalid UTF-8 (byte 0x{data[exc.start]:02x} at column {column})", name, line
        ) from None
    if text.startswith(_BOM):
        text = text[1:]
    return text


def split_lines(text: str) -> list[str]:
    """Split on '\\n' only (never on other Unicode breaks); drop each line's '\\r\\n' / '\\n'."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def read_lines(path: str | Path) -> list[str]:
    """Segments of a text file, one per line; empty lines are kept, an empty file is an error."""
    name = str(path)
    data = read_bytes(path)
    if not data:
        raise InputError("empty file (no segments)", name)
    return split_lines(decode_utf8(data, name))


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Objects of a JSON Lines file, one per line; blank lines and non-objects are errors."""
    name = str(path)
    lines = read_lines(path)
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise InputError("blank line where a JSON object was expected", name, number)
        try:
            record = json.loads(line, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"invalid JSON at column {exc.colno}: {exc.msg}", name, number
            ) from None
        except ValueError as exc:
            raise InputError(str(exc), name, number) from None
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}", name, number)
        records.append(record)
    return records


def _reject_constant(token: str) -> Any:
    """json.loads hook: NaN and Infinity are not valid JSON numbers here."""
    raise ValueError(f"{token} is not allowed (numbers must be finite)")


def check_aligned(files: dict[str, list[str]]) -> int:
    """Common line count of aligned files; the first file that differs is named with the line."""
    items = list(files.items())
    first_name, first_lines = items[0]
    for name, lines in items[1:]:
        if len(lines) != len(first_lines):
            shorter = min(len(lines), len(first_lines))
            raise InputError(
                f"has {len(lines)} lines but {first_name} has {len(first_lines)} "
                f"(aligned files must have the same number of lines)",
                name,
                shorter + 1,
            )
    return len(first_lines)
