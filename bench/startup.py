"""Command start-up on a local file, measured against the floor every command pays: Python
starting and importing DuckDB, measured in the same run.

Run: python bench/startup.py [--repeat 7]

Times, as `tame-wh` child processes (median of --repeat; CPU and peak memory from the child's
own rusage): `tame-wh --help`; `leaderboard --json` on the demo warehouse; `ingest` of a new
40-segment run (the demo test set, --no-intervals and with its default bootstrap
intervals); `init` on the up-to-date warehouse. Also prints what importing each command's
module costs (`python -X importtime`), the part of start-up that deferring imports can cut.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from measure import (
    Measurement,
    compile_package_sources,
    load_average,
    median_each,
    median_ingests,
    print_ratio_table,
    run_child,
)

from warehouse.store.resources import example_dir

COMMAND_MODULES = (
    "warehouse.cli.main",
    "warehouse.cli.ingest",
    "warehouse.cli.leaderboard",
    "warehouse.cli.report",
    "warehouse.cli.query",
)


def _timed(label: str, argv: list[str], repeat: int) -> Measurement:
    return median_each(label, [run_child(label, argv) for _ in range(repeat)])


def _tame(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args]


def _import_ms(module: str) -> float:
    """Milliseconds `import MODULE` takes in a fresh interpreter (cumulative, -X importtime)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    pattern = re.compile(rf"\|\s*(\d+)\s*\|\s*{re.escape(module)}$")
    for line in done.stderr.splitlines():
        found = pattern.search(line.strip())
        if found:
            return int(found.group(1)) / 1000
    raise SystemExit(f"no import time reported for {module}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    compile_package_sources()
    work = Path(tempfile.mkdtemp(prefix="tame-startup-bench-"))
    try:
        db = work / "demo.duckdb"
        run_child("demo", _tame(db, "demo"))
        refs = (example_dir() / "test.es").read_text(encoding="utf-8").splitlines()
        rng = random.Random(3)
        hyps = []
        for k in range(args.repeat * 2):
            lines = [r if rng.random() < 0.6 else r.lower() for r in refs]
            lines[0] = f"start-up bench run {k}"
            path = work / f"hyp{k}.txt"
            path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
            hyps.append(str(path))

        floor = _timed(
            "python -c 'import duckdb' (the floor)",
            [sys.executable, "-c", "import duckdb"],
            args.repeat,
        )
        measured = [
            _timed(
                "tame-wh --help", [sys.executable, "-m", "warehouse.cli", "--help"], args.repeat
            ),
            _timed(
                "leaderboard --json (demo warehouse)",
                _tame(db, "leaderboard", "--json"),
                args.repeat,
            ),
            median_ingests(
                "ingest, 40 segments, --no-intervals",
                _tame(db),
                "demo-test",
                hyps[: args.repeat],
                "--no-intervals",
            ),
            median_ingests(
                "ingest, 40 segments, with intervals", _tame(db), "demo-test", hyps[args.repeat :]
            ),
            _timed("init (up to date)", _tame(db, "init"), args.repeat),
        ]
        print(f"local-file start-up; load average {load_average()}")
        print_ratio_table("command start-up on a local file", floor, measured)
        print("\nimport time of each command's module (ms, cumulative, fresh interpreter)")
        for module in COMMAND_MODULES:
            print(f"  {module:<18} {_import_ms(module):7.0f}")
        print(f"load average {load_average()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
