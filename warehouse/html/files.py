"""Writing pages: only when their content changed, atomically, with errors a user can act on."""

from __future__ import annotations

import os
from pathlib import Path

from warehouse.errors import UsageError


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` to `path` unless it already holds these bytes; whether it wrote."""
    # A changed file gets its new content through a temporary file renamed over the old one, so
    # a reader never sees half a page.
    try:
        if path.is_file():
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                return False
            scratch = path.with_name(f".{path.name}.tmp")
            scratch.write_bytes(data)
            os.replace(scratch, path)
        else:  # a new file: nobody reads it yet, so it is written in place (one create, no rename)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("xb") as new:
                new.write(data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return True
