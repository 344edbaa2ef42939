"""Reading aligned text files: UTF-8, one segment per line, `.gz` transparently (docs/inputs.md)."""

from __future__ import annotations

import gzip
import io
import os
import stat
import zlib
from pathlib import Path
from typing import Any

from warehouse.errors import InputError
from warehouse.inputs.json_checks import JsonPath, loads_checked

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = "\ufeff"


def _describe_kind(mode: int) -> str:
    """What a non-regular file is, for error messages."""
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _read_regular(path: str | Path, name: str, limit: int | None) -> bytes:
    """A regular file's bytes. FIFOs, devices (`/dev/zero`) and sockets are refused before a
    byte is read (opened non-blocking, checked with fstat), so they can never hang the reader."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", name) from None
    except PermissionError:
        raise InputError("permission denied", name) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", name) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("is a directory, not a file", name)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(
                f"is {_describe_kind(info.st_mode)}, not a regular file; give a file", name
            )
        if limit is not None and info.st_size > limit:
            raise InputError(
                f"is {info.st_size:,} bytes; the limit for this kind of file is {limit:,}", name
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", name) from None
    finally:
        os.close(fd)
    if limit is not None and len(data) > limit:
        raise InputError(f"is larger than the limit for this kind of file ({limit:,} bytes)", name)
    return data


def _gunzip(data: bytes, name: str, limit: int | None) -> bytes:
    """Decompressed gzip data, at most `limit` bytes (a small bomb cannot fill the memory)."""
    try:
        if limit is None:
            return gzip.decompress(data)
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"corrupt gzip data ({exc})", name) from None
    if len(out) > limit:
        raise InputError(
            f"decompresses to more than the limit for this kind of file ({limit:,} bytes)", name
        )
    return out


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """Whole file contents, gunzipped when the file is gzip; unreadable files raise InputError.
    Only regular files are read; `limit` bounds the size (on disk and decompressed)."""
    name = str(path)
    data = _read_regular(path, name, limit)
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, name, limit)
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
        record = loads_checked(line, JsonPath(name, line=number))
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}", name, number)
        records.append(record)
    return records


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
