"""Hostile and broken input against the CLI: each case runs `tame-wh` in a child process on a copy
of the demo warehouse and prints one row — input, command, exit code, seconds, whether the
warehouse is byte-for-byte as it was, and the first line of the error. Every case must end in
seconds with a documented exit code (2 for bad input) and never with an internal error (1), a
signal or a hang (the child is stopped after 60 s and the row says `HANG`).

    python bench/hostile_inputs.py [--keep DIR]

Exit status 1 when any row fails those rules.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0


def _tame(work: Path, db: Path, *args: str) -> tuple[int | str, float, str]:
    """Run `tame-wh --db DB ARGS…`: exit code (or HANG), seconds, first error line."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args],
            cwd=work,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return "HANG", time.monotonic() - started, ""
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    return done.returncode, time.monotonic() - started, (lines[0] if lines else "")[:110]


def _digest(path: Path) -> str:
    """The warehouse file's content hash (absent: the empty string)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def _bomb(path: Path, gib: int = 2) -> Path:
    """A few MiB of gzip that decompress to `gib` GiB of newlines."""
    block = b"\n" * 2**24
    with gzip.open(path, "wb", compresslevel=6) as handle:
        for _ in range(gib * 64):
            handle.write(block)
    return path


def main() -> int:
    """Run every case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, default=None, help="Work in DIR and keep it.")
    options = parser.parse_args()
    work = options.keep or Path(tempfile.mkdtemp(prefix="tame-hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    demo = work / "demo.duckdb"
    subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "--db", str(demo), "-q", "demo"],
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
    )
    examples = ROOT / "warehouse" / "examples"
    bomb = _bomb(work / "bomb.gz")
    fifo = work / "fifo.duckdb"
    os.mkfifo(fifo)
    long_line = work / "long.txt"
    long_line.write_text("x" * 1_200_000 + "\n", encoding="utf-8")
    # A stored index replaced by a FIFO, and one corrupted.
    index_dir = Path(f"{demo}.indexes")
    [index_file] = sorted(index_dir.glob("*.index"))
    fifo_db = work / "fifo-index.duckdb"
    shutil.copy(demo, fifo_db)
    shutil.copytree(index_dir, Path(f"{fifo_db}.indexes"))
    fifo_index = Path(f"{fifo_db}.indexes") / index_file.name
    fifo_index.unlink()
    os.mkfifo(fifo_index)
    bad_db = work / "corrupt-index.duckdb"
    shutil.copy(demo, bad_db)
    shutil.copytree(index_dir, Path(f"{bad_db}.indexes"))
    damaged = Path(f"{bad_db}.indexes") / index_file.name
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    src = str(examples / "test.en")
    huge = "1" + "0" * 30 + "TB"
    cases: list[tuple[str, Path, list[str]]] = [
        ("gzip bomb (2 GiB of newlines)", demo, ["ingest", "--testset", "demo-test", "--hyp",
                                                str(bomb), "--model-slug", "x"]),
        ("gzip bomb (2 GiB of newlines)", demo, ["corpus", "add", "b", "--src", str(bomb),
                                                "--tgt", str(bomb)]),
        ("gzip bomb (2 GiB of newlines)", demo, ["testset", "add", "b", "--src", str(bomb),
                                                "--ref", str(bomb)]),
        ("a line of 1.2 M characters", demo, ["testset", "add", "l", "--src", str(long_line),
                                             "--ref", str(long_line)]),
        (f"--memory-limit {huge}", demo, ["audit", "--train", "demo-train", "--testset",
                                          "demo-test", "--force", "--memory-limit", huge]),
        (f"--memory-limit {huge}", demo, ["query", "SELECT 1", "--memory-limit", huge]),
        ("--as-of 9999-12-31T23:59:59.999999-23:59", demo,
         ["leaderboard", "--as-of", "9999-12-31T23:59:59.999999-23:59"]),
        ("--lock-timeout nan", demo, ["--lock-timeout", "nan", "leaderboard"]),
        ("--db is a FIFO", fifo, ["ingest", "--testset", "demo-test", "--hyp", src]),
        ("--db is a FIFO", fifo, ["leaderboard"]),
        ("a FIFO in place of a stored index", fifo_db, ["audit", "--train", "demo-train",
                                                        "--testset", "demo-test", "--force"]),
        ("a corrupted stored index", bad_db, ["index", "list"]),
    ]  # fmt: skip
    print("| input | command | exit | seconds | warehouse unchanged | first line |")
    print("| --- | --- | --- | --- | --- | --- |")
    failed = 0
    for what, db, args in cases:
        before = _digest(db) if db.is_file() else ""
        code, seconds, line = _tame(work, db, *args)
        after = _digest(db) if db.is_file() else ""
        # A FIFO index is replaced (an audit with --force rewrites the warehouse: exit 0 is the
        # expected outcome there); every other case must leave the warehouse as it was.
        rewrites = "FIFO in place" in what
        unchanged = "n/a (rewrites)" if rewrites else ("yes" if before == after else "NO")
        command = " ".join(a for a in args if "/" not in a)[:60]
        expected = 0 if rewrites or "corrupted" in what else 2
        ok = code == expected and (rewrites or before == after) and seconds < 30
        failed += not ok
        print(
            f"| {what} | `{command}` | {code} | {seconds:.1f} | {unchanged} | "
            f"{line.replace('|', '/')} |" + ("" if ok else " **FAIL**")
        )
    listed = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "--db", str(bad_db), "index", "list"],
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    ).stdout
    if "corrupted" not in listed:
        print("index list did not call the corrupted index corrupted **FAIL**")
        failed += 1
    if options.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{len(cases) - min(failed, len(cases))} of {len(cases)} cases held")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
