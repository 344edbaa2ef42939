"""Per-segment metadata of a test set: external id, difficulty 1-5, provenance, extra fields."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse.errors import InputError
from warehouse.inputs.textio import read_jsonl

KNOWN_FIELDS = ("id", "difficulty", "provenance")


@dataclass(frozen=True)
class SegmentMeta:
    """Column-wise metadata for the segments of one test set (None where not given)."""

    keys: list[str | None]
    difficulty: list[int | None]
    provenance: list[str | None]
    extra: list[str | None]  # remaining fields as canonical JSON

    def canonical(self) -> str:
        """Stable JSON of all columns, for the content hash."""
        return json.dumps(
            [self.keys, self.difficulty, self.provenance, self.extra],
            ensure_ascii=False,
            separators=(",", ":"),
        )


def parse_key(value: Any, where: tuple[str, int]) -> str | None:
    """An external segment id: a non-empty string or an integer."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(f"id must be a string or an integer, got {type(value).__name__}", *where)
    key = str(value)
    if not key:
        raise InputError("id must not be empty", *where)
    return key


def parse_difficulty(value: Any, where: tuple[str, int]) -> int | None:
    """A difficulty level: an integer 1-5 (also as a numeric string or a whole float)."""
    if value is None:
        return None
    number: float
    if isinstance(value, bool):
        raise InputError("difficulty must be a number from 1 to 5, got a boolean", *where)
    if isinstance(value, (int, float)):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise InputError(
                f"difficulty must be a number from 1 to 5, got {value!r}", *where
            ) from None
    else:
        raise InputError(
            f"difficulty must be a number from 1 to 5, got {type(value).__name__}", *where
        )
    if not math.isfinite(number) or number != int(number) or not 1 <= number <= 5:
        raise InputError(f"difficulty must be a whole number from 1 to 5, got {value!r}", *where)
    return int(number)


def parse_provenance(value: Any, where: tuple[str, int]) -> str | None:
    """A provenance label: a string."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"provenance must be a string, got {type(value).__name__}", *where)
    return value


def check_unique_keys(keys: list[str], name: str, lines: list[int] | None = None) -> None:
    """Raise on the first repeated segment id, naming both lines."""
    seen: dict[str, int] = {}
    for position, key in enumerate(keys):
        line = lines[position] if lines else position + 1
        if key in seen:
            raise InputError(
                f"duplicate segment id {key!r} (first on line {seen[key]})", name, line
            )
        seen[key] = line


def read_segment_meta(path: str | Path, n_segments: int) -> SegmentMeta:
    """Read a JSONL file with one object per test segment, in segment order."""
    name = str(path)
    records = read_jsonl(path)
    if len(records) != n_segments:
        raise InputError(
            f"has {len(records)} lines but the test set has {n_segments} segments",
            name,
            min(len(records), n_segments) + 1,
        )
    keys: list[str | None] = []
    difficulty: list[int | None] = []
    provenance: list[str | None] = []
    extra: list[str | None] = []
    for number, record in enumerate(records, start=1):
        where = (name, number)
        keys.append(parse_key(record.get("id"), where))
        difficulty.append(parse_difficulty(record.get("difficulty"), where))
        provenance.append(parse_provenance(record.get("provenance"), where))
        rest = {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
        extra.append(json.dumps(rest, ensure_ascii=False, sort_keys=True) if rest else None)
    effective = [key if key is not None else str(i) for i, key in enumerate(keys)]
    check_unique_keys(effective, name)
    return SegmentMeta(keys, difficulty, provenance, extra)
