"""Type checks for JSON documents, each error naming the file and the JSON path of the value."""

from __future__ import annotations

import math
from typing import Any

from warehouse.errors import InputError


class JsonPath:
    """A location inside one JSON file, for error messages such as `run.json: $.totals.cost`."""

    def __init__(self, file: str, path: str = "$") -> None:
        self.file = file
        self.path = path

    def __truediv__(self, key: str | int) -> JsonPath:
        suffix = f"[{key}]" if isinstance(key, int) else f".{key}"
        return JsonPath(self.file, self.path + suffix)

    def fail(self, problem: str) -> InputError:
        """An InputError for this location."""
        return InputError(f"{self.path}: {problem}", self.file)


def describe(value: Any) -> str:
    """Short description of a JSON value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return f"a string ({value[:30]!r})"
    return "a list" if isinstance(value, list) else "an object"


def optional_str(value: Any, where: JsonPath) -> str | None:
    """A string or null."""
    if value is None or isinstance(value, str):
        return value
    raise where.fail(f"must be a string, got {describe(value)}")


def required_str(value: Any, where: JsonPath) -> str:
    """A non-empty string."""
    if isinstance(value, str) and value.strip():
        return value
    raise where.fail(f"must be a non-empty string, got {describe(value)}")


def optional_object(value: Any, where: JsonPath) -> dict[str, Any]:
    """An object (null → empty)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise where.fail(f"must be an object, got {describe(value)}")


def optional_number(value: Any, where: JsonPath, *, non_negative: bool = False) -> float | None:
    """A finite number or null; negative values refused when `non_negative`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise where.fail(f"must be a number, got {describe(value)}")
    if not math.isfinite(value):
        raise where.fail(f"must be finite, got {value!r}")
    if non_negative and value < 0:
        raise where.fail(f"must not be negative, got {value!r}")
    return float(value)


def optional_count(value: Any, where: JsonPath) -> int | None:
    """A non-negative whole number or null (12.0 is accepted as 12)."""
    number = optional_number(value, where, non_negative=True)
    if number is None:
        return None
    if number != int(number):
        raise where.fail(f"must be a whole number, got {value!r}")
    return int(number)


def flatten_numbers(value: Any, prefix: str, where: JsonPath) -> dict[str, float]:
    """Numeric leaves of nested objects as dotted names; booleans count as 1/0; text is skipped."""
    out: dict[str, float] = {}
    if isinstance(value, bool):
        out[prefix] = 1.0 if value else 0.0
    elif isinstance(value, (int, float)):
        number = optional_number(value, where)
        assert number is not None
        out[prefix] = number
    elif isinstance(value, dict):
        for key, inner in value.items():
            out.update(flatten_numbers(inner, f"{prefix}.{key}", where / key))
    return out
