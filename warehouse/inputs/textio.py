"""Reading aligned text files: UTF-8, one segment per line, `.gz` transparently (docs/inputs.md)."""

from __future__ import annotations

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


# Bounds on text inputs (docs/inputs.md), each settable through the environment.
MAX_INPUT_ENV = "TAME_WH_MAX_INPUT_MB"
MAX_LINE_ENV = "TAME_WH_MAX_LINE_CHARS"
DEFAULT_MAX_INPUT_MB = 4096
DEFAULT_MAX_LINE_CHARS = 1_000_000
# Real text compresses a few times over; a gzip file that expands more than this (once it has
# produced this much) is a decompression bomb, refused before it fills the memory.
MAX_GZIP_RATIO = 200
_RATIO_CHECKED_AFTER = 16 * 2**20
_IN_CHUNK = 64 * 2**10
_OUT_CHUNK = 8 * 2**20


def _env_limit(name: str, default: int) -> int:
    """A positive whole number from the environment, else the default."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"${name}={text!r}: give a whole number of at least 1")
    return int(text)


def input_limit() -> int:
    """The most bytes one text input may hold, decompressed: `$TAME_WH_MAX_INPUT_MB` MiB."""
    return _env_limit(MAX_INPUT_ENV, DEFAULT_MAX_INPUT_MB) * 2**20


def line_limit() -> int:
    """The most characters one line (segment, document) may hold: `$TAME_WH_MAX_LINE_CHARS`."""
    return _env_limit(MAX_LINE_ENV, DEFAULT_MAX_LINE_CHARS)


def _gunzip(data: bytes, name: str, limit: int) -> bytes:
    """Decompressed gzip data (every member), at most `limit` bytes, streamed so that a bomb is
    refused as soon as it shows: more than the limit, or expanding more than MAX_GZIP_RATIO
    times."""
    out: list[bytes] = []
    produced = 0
    position = 0  # compressed bytes handed to the inflater so far
    inflater = zlib.decompressobj(wbits=31)
    try:
        while True:
            if inflater.eof:
                rest = inflater.unused_data + data[position:]
                if not rest.strip(b"\0"):
                    break  # the last member (trailing zero padding is allowed)
                if rest[:2] != _GZIP_MAGIC:
                    raise InputError("corrupt gzip data (garbage after the last member)", name)
                data, position = rest, 0
                inflater = zlib.decompressobj(wbits=31)
            if position >= len(data) and not inflater.unconsumed_tail:
                raise InputError("corrupt gzip data (the stream is truncated)", name)
            piece = inflater.unconsumed_tail or data[position : position + _IN_CHUNK]
            if not inflater.unconsumed_tail:
                position += len(piece)
            chunk = inflater.decompress(piece, _OUT_CHUNK)
            produced += len(chunk)
            out.append(chunk)
            if produced > limit:
                raise InputError(
                    f"decompresses to more than the limit of {limit:,} bytes (${MAX_INPUT_ENV})",
                    name,
                )
            if produced > _RATIO_CHECKED_AFTER and produced > MAX_GZIP_RATIO * position:
                raise InputError(
                    f"expands more than {MAX_GZIP_RATIO} times when decompressed (a "
                    "decompression bomb?); refused before reading further",
                    name,
                )
    except zlib.error as exc:
        raise InputError(f"corrupt gzip data ({exc})", name) from None
    return b"".join(out)


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """Whole file contents, gunzipped when the file is gzip; unreadable files raise InputError.
    Only regular files are read; `limit` (default: the input limit) bounds the size on disk and
    decompressed."""
    name = str(path)
    limit = input_limit() if limit is None else limit
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
    lines = split_lines(decode_utf8(data, name))
    longest = line_limit()
    if lines and max(map(len, lines)) > longest:
        number = next(i for i, line in enumerate(lines, start=1) if len(line) > longest)
        raise InputError(
            f"the line holds {len(lines[number - 1]):,} characters; the limit is {longest:,} "
            f"(${MAX_LINE_ENV})",
            name,
            number,
        )
    return lines


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
