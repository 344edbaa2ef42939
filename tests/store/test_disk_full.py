"""Disk full: a write that runs out of space ends in one clear line (exit 2), commits nothing,
and leaves the warehouse file exactly the size it was — however often it is tried — and usable.

The disk is a small tmpfs when this process may mount one (root with mount rights), else the
file-size limit of the child process (RLIMIT_FSIZE, SIGXFSZ ignored so the write fails with
EFBIG instead of killing it); both are deterministic."""

from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import snapshot

ROOT = Path(__file__).resolve().parents[2]
SPACE = 8 * 1024 * 1024


def _random_lines(path: Path, n: int, seed: int) -> Path:
    """Text that compresses badly, so that it cannot fit in the space left."""
    rng = random.Random(seed)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=7)) for _ in range(5000)]
    with path.open("w") as out:
        for _ in range(n):
            out.write(" ".join(rng.choice(words) + str(rng.randrange(10**6)) for _ in range(8)))
            out.write("\n")
    return path


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[tuple[Path, Callable[[int], Callable[[], None]]]]:
    """A directory on a small disk, and a preexec factory that bounds child writes instead when
    no disk can be mounted (given the warehouse size before the command)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = False
    # TAME_WH_TEST_NO_MOUNT=1 tests the file-size-limit path on a machine that could mount.
    if os.geteuid() == 0 and shutil.which("mount") and not os.environ.get("TAME_WH_TEST_NO_MOUNT"):
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={SPACE}", "tmpfs", str(mount)],
            capture_output=True,
        )
        mounted = done.returncode == 0

    def limit(size_before: int) -> Callable[[], None]:
        def apply() -> None:
            if not mounted:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                cap = size_before + 4 * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))

        return apply

    try:
        yield mount, limit
    finally:
        if mounted:
            subprocess.run(["umount", str(mount)], check=False)


def _cli(db: Path, *args: str, preexec: Callable[[], None] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "--db", str(db), *map(str, args)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=preexec,
    )


def test_a_full_disk_is_a_clear_error_and_the_file_keeps_its_size(small_disk, tmp_path):
    disk, limit = small_disk
    db = disk / "wh.duckdb"
    small = [tmp_path / "small.src", tmp_path / "small.ref"]
    small[0].write_text("one two\nthree four\n")
    small[1].write_text("uno dos\ntres cuatro\n")
    assert _cli(db, "testset", "add", "small", "--src", small[0], "--ref", small[1]).returncode == 0
    src = _random_lines(tmp_path / "big.src", 150_000, 1)
    tgt = _random_lines(tmp_path / "big.tgt", 150_000, 2)
    size = db.stat().st_size
    before = snapshot(db)
    attempts = [
        ("corpus", "add", "big", "--src", src, "--tgt", tgt),
        ("testset", "add", "big-test", "--src", src, "--ref", tgt),
        ("corpus", "add", "big", "--src", src, "--tgt", tgt),
    ]
    for args in attempts:
        # --quiet: on a busy machine a long command also says it is still running (every 5 s).
        result = _cli(db, "--quiet", *args, preexec=limit(size))
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        line = lines[0]
        assert line.startswith("error: no space left on device: nothing was committed"), line
        assert "internal error" not in result.stderr
        assert db.stat().st_size == size, (args, db.stat().st_size, size)
        assert snapshot(db) == before
    # The warehouse is intact and still takes small writes.
    assert _cli(db, "testset", "list").returncode == 0
    more = _cli(db, "corpus", "add", "tiny", "--src", small[0], "--tgt", small[1])
    assert more.returncode == 0, more.stderr
    assert {r[1] for r in snapshot(db)["corpora"]} == {"small", "tiny"}


def test_a_warehouse_that_could_not_be_created_is_not_left_behind(small_disk, tmp_path):
    disk, limit = small_disk
    if os.path.ismount(disk):
        # Fill the disk but for a few KiB: less than an empty warehouse needs.
        with (disk / "filler").open("wb") as out:
            try:
                while True:
                    out.write(b"\1" * 65536)
                    out.flush()
            except OSError:
                pass
        for name in ("a", "b"):  # give back a little, in small pieces
            (disk / name).write_bytes(b"")
        preexec = None
    else:
        preexec = limit(-4 * 1024 * 1024 + 64 * 1024)  # a 64 KiB file-size limit

    db = disk / "new.duckdb"
    result = _cli(db, "init", preexec=preexec)
    assert result.returncode == 2, result.stderr
    assert "no space left on device" in result.stderr and "internal error" not in result.stderr
    assert not db.exists() and not Path(f"{db}.wal").exists()
