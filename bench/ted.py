"""The real WMT21 TED Chinese→English data (`--ted DIR`): an unpacked `wmt21-ted-zhen/` folder or
the `wmt21-ted-zhen.tar.gz` it comes in. Every system's output is read back from the MQM
annotation file (error spans' `<v>` tags removed); `refB` serves as the reference."""

from __future__ import annotations

import csv
import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REFERENCE = "refB"
_SPAN = re.compile(r"</?v>")


def _read(folder: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The reference and each other system's output, in segment order."""
    path = folder / "mqm_ted_zhen.tsv"
    if not path.is_file():
        raise SystemExit(f"--ted {folder}: no mqm_ted_zhen.tsv inside")
    outputs: dict[str, dict[int, str]] = {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            seg = int(row["seg_id"])
            outputs.setdefault(row["system"], {}).setdefault(seg, _SPAN.sub("", row["target"]))
    segments = sorted(outputs[REFERENCE])
    texts = {name: [by_seg[s] for s in segments] for name, by_seg in sorted(outputs.items())}
    reference = texts.pop(REFERENCE)
    return reference, texts


@contextmanager
def ted_folder(where: str | Path) -> Iterator[Path]:
    """The unpacked `wmt21-ted-zhen/` folder of a folder or of the archive it comes in."""
    path = Path(where)
    if path.is_dir():
        inner = path / "wmt21-ted-zhen"
        yield inner if inner.is_dir() else path
        return
    if not path.is_file():
        raise SystemExit(f"--ted {where}: no such folder or archive")
    scratch = Path(tempfile.mkdtemp(prefix="tame-bench-ted-"))
    try:
        with tarfile.open(path, "r:*") as archive:
            archive.extractall(scratch, filter="data")
        yield scratch / "wmt21-ted-zhen"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def ted_systems(where: str | Path) -> Iterator[tuple[list[str], dict[str, list[str]]]]:
    """The reference (refB) and the 13 other systems' outputs (12 MT systems and `ref`)."""
    with ted_folder(where) as folder:
        yield _read(folder)
