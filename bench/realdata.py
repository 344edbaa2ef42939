"""The real English→French benchmark data (`--real DIR`): an unpacked `en-fr/` folder or the
`en-fr.tar.gz` it comes in (unpacked into a temporary folder, deleted afterwards)."""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The two test sets: in-domain LibreOffice help paragraphs and out-of-domain Debian descriptions.
TEST_SETS = ("test", "test-ddtp")
SYSTEMS = ("apertium-pivot-cat", "apertium-pivot-spa")
DESCRIPTIONS = {
    "test": "in-domain help paragraphs",
    "test-ddtp": "out-of-domain package descriptions",
}


@dataclass(frozen=True)
class RealData:
    """Paths of the real corpus files."""

    folder: Path

    @property
    def train_src(self) -> Path:
        return self.folder / "train.src"

    @property
    def train_tgt(self) -> Path:
        return self.folder / "train.tgt"

    def src(self, test: str) -> Path:
        """Source side of a test set."""
        return self.folder / f"{test}.src"

    def ref(self, test: str) -> Path:
        """Reference side of a test set."""
        return self.folder / f"{test}.ref"

    def hyp(self, test: str, system: str) -> Path:
        """One MT system's output for a test set."""
        return self.folder / f"{test}.hyp.{system}"

    def lines(self, path: Path) -> int:
        """Number of lines of one of the files."""
        with open(path, "rb") as f:
            return sum(1 for _ in f)


def _check(folder: Path) -> RealData:
    """The folder holds every file the benchmarks read."""
    data = RealData(folder)
    needed = [data.train_src, data.train_tgt]
    for test in TEST_SETS:
        needed += [data.src(test), data.ref(test)]
        needed += [data.hyp(test, system) for system in SYSTEMS]
    missing = [p.name for p in needed if not p.is_file()]
    if missing:
        raise SystemExit(f"--real {folder}: missing {', '.join(missing)}")
    return data


@contextmanager
def real_data(where: str | Path) -> Iterator[RealData]:
    """The data in `where` (a folder, or a .tar.gz unpacked for the duration of the block)."""
    path = Path(where)
    if path.is_dir():
        inner = path / "en-fr"
        yield _check(inner if inner.is_dir() and not (path / "train.src").exists() else path)
        return
    if not path.is_file():
        raise SystemExit(f"--real {where}: no such folder or archive")
    scratch = Path(tempfile.mkdtemp(prefix="tame-bench-realdata-"))
    try:
        with tarfile.open(path, "r:*") as archive:
            archive.extractall(scratch, filter="data")
        folders = [p.parent for p in scratch.rglob("train.src")]
        if len(folders) != 1:
            raise SystemExit(f"--real {where}: expected one folder with train.src inside")
        yield _check(folders[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
