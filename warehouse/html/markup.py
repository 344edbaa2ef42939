"""Escaped HTML fragments: text, attributes, tables, JSON inside script elements, file names.

Every piece of text that reaches a page goes through `esc` (element content and attribute values)
or `script_json` (data for scripts); nothing from the warehouse is ever pasted in raw.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

# In JSON placed inside <script>, these characters must not appear literally: `<` could close
# the element or open a comment, `>` and `&` are escaped too so the text is inert in any context,
# and U+2028/U+2029 end lines in older JavaScript parsers. (Outside JSON strings none of them
# occurs, so the escapes keep the JSON's meaning.)
_SCRIPT_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def esc(value: Any) -> str:
    """Text for element content or a quoted attribute value (`&`, `<`, `>`, `"`, `'` escaped)."""
    return html.escape("" if value is None else str(value), quote=True)


def escape_script_json(text: str) -> str:
    """JSON text made safe to place inside a <script> element."""
    for char, escape in _SCRIPT_ESCAPES:
        if char in text:  # str.replace is fast; most characters are absent from most pages
            text = text.replace(char, escape)
    return text


def _default(value: Any) -> Any:
    """JSON for values json cannot encode: dates as ISO text, anything else as str."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def to_json(value: Any) -> str:
    """Compact JSON; NaN and infinities become null (JSON has no such numbers)."""
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), default=_default, allow_nan=False
        )
    except ValueError:  # a non-finite float somewhere: replace them all (the rare, slow path)
        return json.dumps(
            _finite(value), ensure_ascii=False, separators=(",", ":"), default=_default
        )


def _finite(value: Any) -> Any:
    """The value with non-finite floats replaced by None (recursively through lists and dicts)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def script_json(value: Any) -> str:
    """JSON of `value` ready for a `<script type="application/json">` element."""
    return escape_script_json(to_json(value))


def json_block(element_id: str, value: Any = None, *, raw_json: str | None = None) -> str:
    """A `<script type="application/json">` element holding `value` or JSON text `raw_json`."""
    text = escape_script_json(raw_json) if raw_json is not None else script_json(value)
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


def fmt(value: Any, digits: int = 2) -> str:
    """A number for people: fixed decimals for floats, n/a for NULL."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.{digits}f}"
    return str(value)


def fmt_share(value: float | None) -> str:
    """A share as a percentage, n/a for NULL."""
    return "n/a" if value is None else f"{value:.1%}"


def fmt_interval(estimate: Any, lower: Any, upper: Any, digits: int = 2) -> str:
    """`estimate [lower, upper]`, or the estimate alone without an interval."""
    if lower is None or upper is None:
        return fmt(estimate, digits)
    return f"{fmt(estimate, digits)} [{fmt(lower, digits)}, {fmt(upper, digits)}]"


def link(href: str, text: Any, cls: str | None = None) -> str:
    """An `<a>` element (both the address and the text escaped)."""
    attr = f' class="{esc(cls)}"' if cls else ""
    return f'<a href="{esc(href)}"{attr}>{esc(text)}</a>'


class Raw(str):
    """Markup already escaped (a link, a nested element): tables insert it as it is."""


def cell(value: Any) -> str:
    """Table cell content: Raw markup unchanged, numbers formatted, anything else escaped."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, (int, float)):
        return fmt(value)  # digits, a sign, a point or n/a: nothing to escape
    return esc("n/a" if value is None else value)


def table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    cls: str = "data",
    caption: str | None = None,
    numeric: Sequence[int] = (),
    table_id: str | None = None,
) -> str:
    """An HTML table; cells go through `cell`, columns listed in `numeric` are right-aligned."""
    ident = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(
        f'<th scope="col"{" class=num" if i in numeric else ""}>{esc(c)}</th>'
        for i, c in enumerate(columns)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=num' if i in numeric else ''}>{cell(v)}</td>" for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    title = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (
        f'<table class="{esc(cls)}"{ident}>{title}<thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def fields(pairs: Sequence[tuple[str, Any]]) -> str:
    """A definition list of `label: value` pairs."""
    items = "".join(f"<dt>{esc(k)}</dt><dd>{cell(v)}</dd>" for k, v in pairs)
    return f'<dl class="fields">{items}</dl>'


def safe_name(text: str, suffix: str = "", limit: int = 60) -> str:
    """A file name of letters, digits, `.`, `_` and `-` from any text, then `suffix` (an id)."""
    # The suffix keeps two names apart when they reduce to the same characters.
    base = _UNSAFE_NAME.sub("-", text).strip(".-")[:limit] or "x"
    return f"{base}-{suffix}" if suffix else base
