"""Sizes of memory as people write them, read one way for every option and setting
(docs/cli.md "Sizes"): KB, MB, GB, TB, PB are powers of 1000; KiB, MiB, GiB, TiB, PiB and the
single letters K, M, G, T, P (as `docker -m 2g` and `java -Xmx2g` read them) are powers of 1024;
a bare number is bytes."""

from __future__ import annotations

import re

from warehouse.errors import UsageError

# The largest size accepted: 1 PiB (DuckDB cannot parse a much larger memory limit).
MAX_SIZE_BYTES = 2**50

_UNITS = {"": 1, "b": 1}
for _power, _letter in enumerate("kmgtp", start=1):
    _UNITS[_letter] = 1024**_power
    _UNITS[f"{_letter}ib"] = 1024**_power
    _UNITS[f"{_letter}b"] = 1000**_power
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str, where: str = "--memory-limit") -> int:
    """`4GiB`, `512MiB`, `2G`, `1.5GB` or `1000000` (bytes) as a number of bytes; `where` names
    the option or setting in the error."""
    match = _SIZE.match(text)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if match is None or unit is None:
        raise UsageError(
            f"{where} {text!r}: give a size such as 512MB, 4GiB or 2G "
            "(KB, MB, GB are powers of 1000; KiB, MiB, GiB and K, M, G powers of 1024)"
        )
    value = float(match.group(1)) * unit
    if not value <= MAX_SIZE_BYTES:
        raise UsageError(f"{where} {text}: more than any machine has (at most 1 PiB)")
    return int(value)


def size_text(n: float) -> str:
    """Bytes for people, in the binary unit that keeps the number readable."""
    for unit, power in (("PiB", 5), ("TiB", 4), ("GiB", 3)):
        if n >= 1024**power:
            return f"{n / 1024**power:.2f} {unit}"
    return f"{n / 2**20:.0f} MiB"
