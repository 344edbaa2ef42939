"""Type checks for JSON documents, each error naming the file and the JSON path of the value."""

from __future__ import annotations

import json
import math
from typing import Any

from warehouse.errors import InputError, UsageError

# Limits on JSON input (docs/inputs.md): nesting depth, file size, and the ranges every
# number must fit: integers in int64 (BIGINT), stored numbers in Postgres `real`, which sync uses.
MAX_JSON_DEPTH = 64
MAX_JSON_BYTES = 256 * 1024 * 1024
INT64_MAX = 2**63 - 1
REAL_MAX = 3.4028234663852886e38
MAX_LABEL_LENGTH = 200


class JsonPath:
    """A location inside one JSON file, for error messages such as `run.json: $.totals.cost`.

    `where / key` is cheap (the path text is only spelled out when an error names it), so
    parsers can pass a location down to every value they check.
    """

    __slots__ = ("_key", "_parent", "file", "line")

    def __init__(self, file: str, path: str = "$", line: int | None = None) -> None:
        self.file = file
        self.line = line
        self._parent: JsonPath | None = None
        self._key: str | int = path

    def __truediv__(self, key: str | int) -> JsonPath:
        child = JsonPath.__new__(JsonPath)
        child.file, child.line, child._parent, child._key = self.file, self.line, self, key
        return child

    @property
    def path(self) -> str:
        """The JSON path, e.g. `$.entries[3].latency_s`."""
        parts: list[str] = []
        node: JsonPath | None = self
        while node is not None and node._parent is not None:
            key = node._key
            parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
            node = node._parent
        root = str(node._key) if node is not None else "$"
        return root + "".join(reversed(parts))

    def fail(self, problem: str) -> InputError:
        """An InputError for this location."""
        return InputError(f"{self.path}: {problem}", self.file, self.line)


class _BadNumber:
    """A JSON number token that parsed to something the warehouse cannot hold (NaN, Infinity,
    1e999, an integer beyond int64); reported with its JSON path by `check_json_values`."""

    def __init__(self, token: str, problem: str) -> None:
        self.token = token
        self.problem = problem


def _parse_constant(token: str) -> _BadNumber:
    return _BadNumber(token, f"{token} is not allowed (numbers must be finite)")


def _parse_float(token: str) -> float | _BadNumber:
    value = float(token)
    if math.isfinite(value):
        return value
    return _BadNumber(token, f"{_short(token)} is out of range (numbers must be finite)")


def _parse_int(token: str) -> int | _BadNumber:
    if len(token.lstrip("-")) > 19 or abs(value := int(token)) > INT64_MAX:
        return _BadNumber(
            token, f"integer {_short(token)} is out of range (integers must fit in 64 bits)"
        )
    return value


def _short(token: str) -> str:
    """A long number token cut for messages."""
    return token if len(token) <= 30 else f"{token[:12]}…({len(token)} digits)"


def loads_checked(text: str, where: JsonPath) -> Any:
    """Parse JSON text and check every value (`check_json_values`); syntax errors name the
    line and column."""
    try:
        document = json.loads(
            text, parse_constant=_parse_constant, parse_float=_parse_float, parse_int=_parse_int
        )
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON at column {exc.colno}: {exc.msg}"
        raise InputError(problem, where.file, (where.line or 1) + exc.lineno - 1) from None
    except RecursionError:
        raise where.fail(f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:
        raise where.fail(str(exc)) from None
    check_json_values(document, where)
    return document


def check_json_values(document: Any, where: JsonPath) -> None:
    """Every number finite and in range, nesting at most MAX_JSON_DEPTH levels deep."""
    if _values_ok(document):
        return
    # Something is wrong: walk again, keeping paths, to name the first problem.
    stack: list[tuple[Any, JsonPath, int]] = [(document, where, 0)]
    while stack:
        value, at, depth = stack.pop()
        if isinstance(value, _BadNumber):
            raise at.fail(value.problem)
        if isinstance(value, (dict, list)):
            if depth >= MAX_JSON_DEPTH:
                raise at.fail(f"nested more than {MAX_JSON_DEPTH} levels deep")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((inner, at / key, depth + 1) for key, inner in items)


def _values_ok(document: Any) -> bool:
    """Whether `check_json_values` has nothing to report (a walk without paths: the common
    case costs one visit per container)."""
    level: list[Any] = [document]
    depth = 0
    while level:
        deeper: list[Any] = []
        for value in level:
            if isinstance(value, dict):
                children: Any = value.values()
            elif isinstance(value, list):
                children = value
            elif isinstance(value, _BadNumber):
                return False
            else:
                continue
            if depth >= MAX_JSON_DEPTH:
                return False
            for child in children:
                if isinstance(child, (dict, list, _BadNumber)):
                    deeper.append(child)
        level = deeper
        depth += 1
    return True


def check_labels(**labels: str | None) -> None:
    """Refuse command-line labels (`model_slug="…"` checks --model-slug) with control
    characters or of unusable length."""
    for name, value in labels.items():
        problem = None if value is None else label_problem(value, f"--{name.replace('_', '-')}")
        if problem:
            raise UsageError(problem)


def label_problem(value: str, what: str) -> str | None:
    """Why a label (model slug, condition, name) is unusable, or None: 1-200 printable
    characters, no control characters."""
    if not value or len(value) > MAX_LABEL_LENGTH:
        return f"{what} must have 1-{MAX_LABEL_LENGTH} characters, got {len(value)}"
    if not value.isprintable():
        return f"{what} {value[:40]!r} holds control characters (not allowed)"
    return None


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
    if abs(value) > REAL_MAX:
        raise where.fail(f"{value!r} is out of range (at most {REAL_MAX:.4g} in magnitude)")
    if non_negative and value < 0:
        raise where.fail(f"must not be negative, got {value!r}")
    return float(value)


def optional_count(value: Any, where: JsonPath) -> int | None:
    """A non-negative whole number or null (12.0 is accepted as 12), at most 2^63 - 1."""
    number = optional_number(value, where, non_negative=True)
    if number is None:
        return None
    if isinstance(value, int):
        whole = value
    elif number != int(number):
        raise where.fail(f"must be a whole number, got {value!r}")
    else:
        whole = int(number)
    if whole > INT64_MAX:
        raise where.fail(f"{value!r} is out of range (at most 2^63 - 1)")
    return whole


def field_str(obj: dict[str, Any], key: str, where: JsonPath) -> str | None:
    """`optional_str` of `obj[key]` (absent = null); the path `where / key` is only built to
    name a wrong value."""
    value = obj.get(key)
    if value is None or type(value) is str:
        return value
    return optional_str(value, where / key)


def field_number(
    obj: dict[str, Any], key: str, where: JsonPath, *, non_negative: bool = False
) -> float | None:
    """`optional_number` of `obj[key]` (absent = null), the path built only for a wrong value."""
    value = obj.get(key)
    low = 0.0 if non_negative else -REAL_MAX
    if isinstance(value, (int, float)) and type(value) is not bool and low <= value <= REAL_MAX:
        return float(value)  # finite (NaN fails the comparison), in range
    return optional_number(value, where / key, non_negative=non_negative)


def field_count(obj: dict[str, Any], key: str, where: JsonPath) -> int | None:
    """`optional_count` of `obj[key]` (absent = null), the path built only for a wrong value."""
    value = obj.get(key)
    if type(value) is int and 0 <= value <= INT64_MAX:
        return value
    if value is None:
        return None
    return optional_count(value, where / key)


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
