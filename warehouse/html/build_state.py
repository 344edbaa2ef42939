"""What a dashboard build was made from, recorded in its folder (assets/build-state.json): the
digest of the stored rows (warehouse/store/content_state.py), the comparisons asked for, this
installation's code and the versions of what renders the charts, and the size and modification
time of each file the build left. A rebuild from the same state whose files are as they were
left has nothing to do, and stops before reading the pages' data or importing what renders
them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from warehouse.html.files import write_if_changed

_STATE = "assets/build-state.json"
_PACKAGE = Path(__file__).resolve().parents[1]
# Distributions whose versions change the pages (the Vega bundle, its charts, the numbers).
_RENDERING = ("altair", "vl-convert-python", "duckdb")


@dataclass
class DashboardResult:
    """What a build wrote: files written, already up to date, and removed (stale pages)."""

    out: str
    runs: int
    test_sets: int
    comparisons: int
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def dashboard_state(content: str, compare: Sequence[tuple[str, str]], runs: str = "") -> str:
    """What a dashboard is made from: the stored rows' digest (`content_state`), the pairs
    asked for, and this installation's code and assets (a new version renders otherwise)."""
    digest = hashlib.sha256(f"{content}|{json.dumps([list(p) for p in compare])}|{runs}|".encode())
    for distribution in _RENDERING:
        digest.update(f"{distribution} {metadata.version(distribution)};".encode())
    for path in sorted(_PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(_PACKAGE).as_posix().encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def unchanged_dashboard(out: str | Path, state: str) -> DashboardResult | None:
    """The result of a build that has nothing to do: the folder's last build was made from
    `state` and every file it wrote is as it was left (size and modification time); else None."""
    root = Path(out)
    try:
        recorded = json.loads((root / _STATE).read_text(encoding="utf-8"))
        if recorded.get("state") != state:
            return None
        for relative, (size, mtime_ns) in recorded["files"].items():
            found = (root / relative).stat()
            if (found.st_size, found.st_mtime_ns) != (size, mtime_ns):
                return None
        n = recorded["counts"]
        return DashboardResult(str(root), int(n["runs"]), int(n["test_sets"]),
                               int(n["comparisons"]), unchanged=len(recorded["files"]))  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_state(root: Path, state: str, result: DashboardResult, produced: set[str]) -> None:
    """Write what the finished build was made from (`unchanged_dashboard` reads it)."""
    files = {}
    for relative in sorted(produced):
        found = (root / relative).stat()
        files[relative] = [found.st_size, found.st_mtime_ns]
    counts = {"runs": result.runs, "test_sets": result.test_sets, "comparisons": result.comparisons}
    record = {"format": 1, "state": state, "counts": counts, "files": files}
    write_if_changed(root / _STATE, json.dumps(record).encode("utf-8"))


def clear_state(root: Path) -> None:
    """Forget the last build's record (before a build rewrites the folder)."""
    (root / _STATE).unlink(missing_ok=True)
